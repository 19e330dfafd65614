-- Events, deliveries, attempts, the DLQ counters and replay sessions (issue 3).

CREATE TABLE events (
    tenant      TEXT    NOT NULL,
    id          TEXT    NOT NULL,           -- evt_…, also the webhook-id
    endpoint    TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    event_key   TEXT,
    payload     TEXT    NOT NULL,           -- JSON
    created_at  INTEGER NOT NULL,           -- unix ms
    PRIMARY KEY (id)
);

-- Dedup of (tenant, endpoint, event_key) within the retention window. A row older than the
-- window is replaced by the next event with that key.
CREATE TABLE event_keys (
    tenant      TEXT    NOT NULL,
    endpoint    TEXT    NOT NULL,
    event_key   TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant, endpoint, event_key)
) WITHOUT ROWID;

CREATE TABLE deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,   -- dlv_…
    tenant          TEXT    NOT NULL,
    event_id        TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    endpoint        TEXT    NOT NULL,
    flow            TEXT    NOT NULL,
    target          TEXT    NOT NULL,
    mode            TEXT    NOT NULL CHECK (mode IN ('sync', 'async_inline', 'async_relay')),
    edge            TEXT,
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'in_flight', 'succeeded', 'dead', 'replayed', 'cancelled')),
    attempts_made   INTEGER NOT NULL DEFAULT 0,
    max_attempts    INTEGER NOT NULL,
    next_attempt_at INTEGER,                -- pending: when the next attempt is due
    lease_owner     TEXT,                   -- in_flight: who holds it
    lease_until     INTEGER,                -- in_flight: lease expiry
    lease_token     INTEGER NOT NULL DEFAULT 0, -- fencing token, bumped by every claim
    current_attempt TEXT,                   -- in_flight: the attempt id
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    dead_at         INTEGER,
    error_class     TEXT,
    last_status     INTEGER,
    replay_session  TEXT,
    replay_of       TEXT,
    replayed_by     TEXT
);

CREATE INDEX deliveries_event ON deliveries (event_id);
-- Due work: the worker's claim and the edge's lease.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_lease ON deliveries (lease_until) WHERE state = 'in_flight';
CREATE INDEX deliveries_open_by_endpoint ON deliveries (tenant, endpoint) WHERE state IN ('pending', 'in_flight');
-- The DLQ, newest first, unfiltered and by each filter column.
CREATE INDEX dlq_all ON deliveries (tenant, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_target ON deliveries (tenant, target, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_endpoint ON deliveries (tenant, endpoint, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_flow ON deliveries (tenant, flow, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_error_class ON deliveries (tenant, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
-- The error class combined with another filter (the triage question "which 5xx of target X"):
-- without these, a rare combination scans every dead delivery of the other column.
CREATE INDEX dlq_by_target_class ON deliveries (tenant, target, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_endpoint_class ON deliveries (tenant, endpoint, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_endpoint_target ON deliveries (tenant, endpoint, target, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_flow_class ON deliveries (tenant, flow, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX deliveries_replay_session ON deliveries (replay_session) WHERE replay_session IS NOT NULL;

CREATE TABLE attempts (
    id           TEXT    NOT NULL PRIMARY KEY,  -- att_…
    delivery_id  TEXT    NOT NULL,
    number       INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    duration_ms  INTEGER,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('in_flight', 'succeeded', 'failed')),
    status_code  INTEGER,
    error_class  TEXT,
    error        TEXT,
    performed_by TEXT    NOT NULL,
    finished_by  TEXT    CHECK (finished_by IN ('sender', 'reaper')), -- who recorded the outcome
    UNIQUE (delivery_id, number)
);

-- DLQ counters per (tenant, target, error class, hour), kept exact by triggers on every
-- transition into and out of `dead`, so stats never scan the DLQ.
CREATE TABLE dlq_counts (
    tenant      TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    error_class TEXT    NOT NULL,
    hour        INTEGER NOT NULL,   -- dead_at / 3600000
    count       INTEGER NOT NULL,
    PRIMARY KEY (tenant, target, error_class, hour)
) WITHOUT ROWID;

CREATE TRIGGER dlq_count_insert AFTER INSERT ON deliveries WHEN NEW.state = 'dead'
BEGIN
    INSERT INTO dlq_counts (tenant, target, error_class, hour, count)
    VALUES (NEW.tenant, NEW.target, COALESCE(NEW.error_class, ''), NEW.dead_at / 3600000, 1)
    ON CONFLICT (tenant, target, error_class, hour) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER dlq_count_enter AFTER UPDATE OF state ON deliveries
WHEN NEW.state = 'dead' AND OLD.state <> 'dead'
BEGIN
    INSERT INTO dlq_counts (tenant, target, error_class, hour, count)
    VALUES (NEW.tenant, NEW.target, COALESCE(NEW.error_class, ''), NEW.dead_at / 3600000, 1)
    ON CONFLICT (tenant, target, error_class, hour) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER dlq_count_leave AFTER UPDATE OF state ON deliveries
WHEN OLD.state = 'dead' AND NEW.state <> 'dead'
BEGIN
    UPDATE dlq_counts SET count = count - 1
    WHERE tenant = OLD.tenant AND target = OLD.target
      AND error_class = COALESCE(OLD.error_class, '') AND hour = OLD.dead_at / 3600000;
END;

CREATE TABLE replay_sessions (
    tenant       TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    fingerprint  BLOB    NOT NULL,    -- SHA-256 of the canonical request body
    request      TEXT    NOT NULL,    -- JSON
    rate_per_s   REAL,
    created_at   INTEGER NOT NULL,
    cancelled_at INTEGER,
    PRIMARY KEY (tenant, id)
) WITHOUT ROWID;

CREATE INDEX replay_sessions_created ON replay_sessions (tenant, created_at DESC);

-- At most one re-delivery per (session, original): the primary key enforces it.
CREATE TABLE replay_items (
    tenant        TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    original_id   TEXT    NOT NULL,
    delivery_id   TEXT,               -- NULL when skipped
    skip_reason   TEXT,
    position      INTEGER NOT NULL,
    PRIMARY KEY (tenant, session_id, original_id)
) WITHOUT ROWID;
