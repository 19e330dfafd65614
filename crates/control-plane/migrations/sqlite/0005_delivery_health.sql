-- Delivery health (issue 15): per-minute rollups of finished attempts and a health row per
-- target, endpoint and flow, kept by a trigger on every attempt that leaves `in_flight`, in
-- the same transaction that records it, so `GET /v1/metrics/deliveries` and the dashboards
-- read aggregates and never scan attempts.
--
-- `attempt_rollups`: one row per (tenant, dimension, name) and minute the attempt finished,
-- and one per hour (`resolution` 60): the short windows sum minutes, the long ones hours, so
-- a 24-hour report reads 24 rows per group instead of 1,440.
-- The latency histogram's upper bounds are 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000,
-- 10000, 30000 ms (`lat_0` … `lat_11`) and unbounded (`lat_12`); failures are counted by
-- error class (`f_<class>`; an attempt failed without a class counts in `f_other`).
CREATE TABLE attempt_rollups (
    tenant      TEXT    NOT NULL,
    dimension   TEXT    NOT NULL CHECK (dimension IN ('target', 'endpoint', 'flow')),
    name        TEXT    NOT NULL,
    resolution  INTEGER NOT NULL CHECK (resolution IN (1, 60)),   -- minutes per row
    minute      INTEGER NOT NULL,   -- the row's first minute: finished minute rounded down to the resolution
    attempts    INTEGER NOT NULL,
    successes   INTEGER NOT NULL,
    f_http_4xx          INTEGER NOT NULL,
    f_http_5xx          INTEGER NOT NULL,
    f_timeout           INTEGER NOT NULL,
    f_connect           INTEGER NOT NULL,
    f_tls               INTEGER NOT NULL,
    f_forbidden_address INTEGER NOT NULL,
    f_other             INTEGER NOT NULL,
    lat_0       INTEGER NOT NULL,
    lat_1       INTEGER NOT NULL,
    lat_2       INTEGER NOT NULL,
    lat_3       INTEGER NOT NULL,
    lat_4       INTEGER NOT NULL,
    lat_5       INTEGER NOT NULL,
    lat_6       INTEGER NOT NULL,
    lat_7       INTEGER NOT NULL,
    lat_8       INTEGER NOT NULL,
    lat_9       INTEGER NOT NULL,
    lat_10      INTEGER NOT NULL,
    lat_11      INTEGER NOT NULL,
    lat_12      INTEGER NOT NULL,
    PRIMARY KEY (tenant, dimension, resolution, minute, name)
) WITHOUT ROWID;

-- The run of failures of each target, endpoint and flow, in the order attempts were recorded.
CREATE TABLE delivery_health (
    tenant               TEXT    NOT NULL,
    dimension            TEXT    NOT NULL CHECK (dimension IN ('target', 'endpoint', 'flow')),
    name                 TEXT    NOT NULL,
    consecutive_failures INTEGER NOT NULL,
    failing_since        INTEGER,
    last_success_at      INTEGER,
    last_failure_at      INTEGER,
    last_error_class     TEXT,
    last_error           TEXT,
    PRIMARY KEY (tenant, dimension, name)
) WITHOUT ROWID;

-- Events accepted per (tenant, minute), for the dashboards' totals.
CREATE TABLE event_rollups (
    tenant  TEXT    NOT NULL,
    minute  INTEGER NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (tenant, minute)
) WITHOUT ROWID;

CREATE TRIGGER attempt_finished AFTER UPDATE OF outcome ON attempts
WHEN OLD.outcome = 'in_flight' AND NEW.outcome <> 'in_flight'
BEGIN
    INSERT INTO attempt_rollups (tenant, dimension, name, resolution, minute, attempts, successes, f_http_4xx, f_http_5xx, f_timeout, f_connect, f_tls, f_forbidden_address, f_other, lat_0, lat_1, lat_2, lat_3, lat_4, lat_5, lat_6, lat_7, lat_8, lat_9, lat_10, lat_11, lat_12)
    SELECT d.tenant,
           dim.dimension,
           CASE dim.dimension WHEN 'target' THEN d.target WHEN 'endpoint' THEN d.endpoint ELSE d.flow END,
           r.resolution,
           ((NEW.started_at + COALESCE(NEW.duration_ms, 0)) / 60000 / r.resolution) * r.resolution,
           1,
           CASE WHEN NEW.outcome = 'succeeded' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND NEW.error_class = 'http_4xx' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND NEW.error_class = 'http_5xx' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND NEW.error_class = 'timeout' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND NEW.error_class = 'connect' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND NEW.error_class = 'tls' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND NEW.error_class = 'forbidden_address' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' AND (NEW.error_class IS NULL OR NEW.error_class NOT IN ('http_4xx', 'http_5xx', 'timeout', 'connect', 'tls', 'forbidden_address')) THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms <= 5 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 5 AND NEW.duration_ms <= 10 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 10 AND NEW.duration_ms <= 25 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 25 AND NEW.duration_ms <= 50 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 50 AND NEW.duration_ms <= 100 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 100 AND NEW.duration_ms <= 250 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 250 AND NEW.duration_ms <= 500 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 500 AND NEW.duration_ms <= 1000 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 1000 AND NEW.duration_ms <= 2500 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 2500 AND NEW.duration_ms <= 5000 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 5000 AND NEW.duration_ms <= 10000 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 10000 AND NEW.duration_ms <= 30000 THEN 1 ELSE 0 END,
           CASE WHEN NEW.duration_ms > 30000 THEN 1 ELSE 0 END
    FROM deliveries d CROSS JOIN (SELECT 'target' AS dimension UNION ALL SELECT 'endpoint' UNION ALL SELECT 'flow') dim CROSS JOIN (SELECT 1 AS resolution UNION ALL SELECT 60) r
    WHERE d.id = NEW.delivery_id
    ON CONFLICT (tenant, dimension, resolution, minute, name) DO UPDATE SET
        attempts = attempt_rollups.attempts + excluded.attempts,
        successes = attempt_rollups.successes + excluded.successes,
        f_http_4xx = attempt_rollups.f_http_4xx + excluded.f_http_4xx,
        f_http_5xx = attempt_rollups.f_http_5xx + excluded.f_http_5xx,
        f_timeout = attempt_rollups.f_timeout + excluded.f_timeout,
        f_connect = attempt_rollups.f_connect + excluded.f_connect,
        f_tls = attempt_rollups.f_tls + excluded.f_tls,
        f_forbidden_address = attempt_rollups.f_forbidden_address + excluded.f_forbidden_address,
        f_other = attempt_rollups.f_other + excluded.f_other,
        lat_0 = attempt_rollups.lat_0 + excluded.lat_0,
        lat_1 = attempt_rollups.lat_1 + excluded.lat_1,
        lat_2 = attempt_rollups.lat_2 + excluded.lat_2,
        lat_3 = attempt_rollups.lat_3 + excluded.lat_3,
        lat_4 = attempt_rollups.lat_4 + excluded.lat_4,
        lat_5 = attempt_rollups.lat_5 + excluded.lat_5,
        lat_6 = attempt_rollups.lat_6 + excluded.lat_6,
        lat_7 = attempt_rollups.lat_7 + excluded.lat_7,
        lat_8 = attempt_rollups.lat_8 + excluded.lat_8,
        lat_9 = attempt_rollups.lat_9 + excluded.lat_9,
        lat_10 = attempt_rollups.lat_10 + excluded.lat_10,
        lat_11 = attempt_rollups.lat_11 + excluded.lat_11,
        lat_12 = attempt_rollups.lat_12 + excluded.lat_12;
    INSERT INTO delivery_health (tenant, dimension, name, consecutive_failures, failing_since,
        last_success_at, last_failure_at, last_error_class, last_error)
    SELECT d.tenant, dim.dimension,
           CASE dim.dimension WHEN 'target' THEN d.target WHEN 'endpoint' THEN d.endpoint ELSE d.flow END,
           CASE WHEN NEW.outcome = 'failed' THEN 1 ELSE 0 END,
           CASE WHEN NEW.outcome = 'failed' THEN (NEW.started_at + COALESCE(NEW.duration_ms, 0)) END,
           CASE WHEN NEW.outcome = 'succeeded' THEN (NEW.started_at + COALESCE(NEW.duration_ms, 0)) END,
           CASE WHEN NEW.outcome = 'failed' THEN (NEW.started_at + COALESCE(NEW.duration_ms, 0)) END,
           CASE WHEN NEW.outcome = 'failed' THEN NEW.error_class END,
           CASE WHEN NEW.outcome = 'failed' THEN NEW.error END
    FROM deliveries d CROSS JOIN (SELECT 'target' AS dimension UNION ALL SELECT 'endpoint' UNION ALL SELECT 'flow') dim
    WHERE d.id = NEW.delivery_id
    ON CONFLICT (tenant, dimension, name) DO UPDATE SET
        consecutive_failures = CASE WHEN excluded.last_success_at IS NOT NULL THEN 0
            ELSE delivery_health.consecutive_failures + 1 END,
        failing_since = CASE WHEN excluded.last_success_at IS NOT NULL THEN NULL
            ELSE COALESCE(delivery_health.failing_since, excluded.failing_since) END,
        last_success_at = COALESCE(excluded.last_success_at, delivery_health.last_success_at),
        last_failure_at = COALESCE(excluded.last_failure_at, delivery_health.last_failure_at),
        last_error_class = CASE WHEN excluded.last_failure_at IS NOT NULL THEN excluded.last_error_class
            ELSE delivery_health.last_error_class END,
        last_error = CASE WHEN excluded.last_failure_at IS NOT NULL THEN excluded.last_error
            ELSE delivery_health.last_error END;
END;

CREATE TRIGGER event_accepted AFTER INSERT ON events
BEGIN
    INSERT INTO event_rollups (tenant, minute, count) VALUES (NEW.tenant, NEW.created_at / 60000, 1)
    ON CONFLICT (tenant, minute) DO UPDATE SET count = event_rollups.count + 1;
END;

-- Attempts and events recorded before this migration, so the first report after an upgrade
-- already has its history (the health rows start with the next attempt: the order of earlier
-- ones is not known).
INSERT INTO attempt_rollups (tenant, dimension, name, resolution, minute, attempts, successes, f_http_4xx, f_http_5xx, f_timeout, f_connect, f_tls, f_forbidden_address, f_other, lat_0, lat_1, lat_2, lat_3, lat_4, lat_5, lat_6, lat_7, lat_8, lat_9, lat_10, lat_11, lat_12)
    SELECT d.tenant,
           dim.dimension,
           CASE dim.dimension WHEN 'target' THEN d.target WHEN 'endpoint' THEN d.endpoint ELSE d.flow END,
           r.resolution,
           ((a.started_at + COALESCE(a.duration_ms, 0)) / 60000 / r.resolution) * r.resolution,
           COUNT(*),
           SUM(CASE WHEN a.outcome = 'succeeded' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND a.error_class = 'http_4xx' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND a.error_class = 'http_5xx' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND a.error_class = 'timeout' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND a.error_class = 'connect' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND a.error_class = 'tls' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND a.error_class = 'forbidden_address' THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.outcome = 'failed' AND (a.error_class IS NULL OR a.error_class NOT IN ('http_4xx', 'http_5xx', 'timeout', 'connect', 'tls', 'forbidden_address')) THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms <= 5 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 5 AND a.duration_ms <= 10 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 10 AND a.duration_ms <= 25 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 25 AND a.duration_ms <= 50 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 50 AND a.duration_ms <= 100 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 100 AND a.duration_ms <= 250 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 250 AND a.duration_ms <= 500 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 500 AND a.duration_ms <= 1000 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 1000 AND a.duration_ms <= 2500 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 2500 AND a.duration_ms <= 5000 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 5000 AND a.duration_ms <= 10000 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 10000 AND a.duration_ms <= 30000 THEN 1 ELSE 0 END),
           SUM(CASE WHEN a.duration_ms > 30000 THEN 1 ELSE 0 END)
    FROM attempts a JOIN deliveries d ON d.id = a.delivery_id CROSS JOIN (SELECT 'target' AS dimension UNION ALL SELECT 'endpoint' UNION ALL SELECT 'flow') dim CROSS JOIN (SELECT 1 AS resolution UNION ALL SELECT 60) r
    WHERE a.outcome <> 'in_flight'
    GROUP BY d.tenant, dim.dimension, 3, 4, 5;

INSERT INTO event_rollups (tenant, minute, count)
    SELECT tenant, created_at / 60000, COUNT(*) FROM events GROUP BY tenant, created_at / 60000;
