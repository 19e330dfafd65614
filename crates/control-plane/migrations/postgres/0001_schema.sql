-- The control plane's schema on PostgreSQL: the same tables as the SQLite backend's
-- migrations 0001-0004, in one step. Integers are BIGINT (unix milliseconds, counters);
-- JSON documents are TEXT, parsed by the control plane.

-- Managed resources: endpoints, targets and flows, one row per (tenant, kind, name).
CREATE TABLE resources (
    tenant      TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('endpoint', 'target', 'flow')),
    name        TEXT    NOT NULL,
    version     BIGINT  NOT NULL CHECK (version >= 1),
    spec        TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    -- What a flow points at, so "who uses this endpoint/target" is an index lookup.
    ref_endpoint TEXT GENERATED ALWAYS AS (CASE WHEN kind = 'flow' THEN spec::jsonb ->> 'endpoint' END) STORED,
    ref_target   TEXT GENERATED ALWAYS AS (CASE WHEN kind = 'flow' THEN spec::jsonb ->> 'target' END) STORED,
    PRIMARY KEY (tenant, kind, name)
);

CREATE INDEX resources_flow_endpoint ON resources (tenant, ref_endpoint) WHERE kind = 'flow';
CREATE INDEX resources_flow_target ON resources (tenant, ref_target) WHERE kind = 'flow';

-- Webhook signing secrets of targets.
CREATE TABLE signing_secrets (
    tenant      TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    expires_at  BIGINT,
    PRIMARY KEY (tenant, target, id)
);

-- The Idempotency-Key store: one row per (tenant, key), claimed by INSERT ... ON CONFLICT
-- DO NOTHING.
CREATE TABLE idempotency_keys (
    tenant           TEXT    NOT NULL,
    key              TEXT    NOT NULL,
    fingerprint      BYTEA   NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('in_progress', 'completed')),
    attempt          BIGINT  NOT NULL,           -- fencing token: bumped by every takeover
    locked_until     BIGINT  NOT NULL,           -- lease expiry of an in-progress claim
    created_at       BIGINT  NOT NULL,
    response_status  BIGINT,
    response_headers TEXT,                       -- JSON array of [name, value]
    response_body    BYTEA,
    PRIMARY KEY (tenant, key)
);

CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

CREATE TABLE events (
    tenant      TEXT    NOT NULL,
    id          TEXT    NOT NULL PRIMARY KEY,   -- evt_..., also the webhook-id
    endpoint    TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    event_key   TEXT,
    payload     TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL
);

CREATE INDEX events_by_key ON events (tenant, event_key, created_at DESC, id DESC)
    WHERE event_key IS NOT NULL;

-- Dedup of (tenant, endpoint, event_key) within the retention window.
CREATE TABLE event_keys (
    tenant      TEXT    NOT NULL,
    endpoint    TEXT    NOT NULL,
    event_key   TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    PRIMARY KEY (tenant, endpoint, event_key)
);

CREATE INDEX event_keys_created_at ON event_keys (created_at);

CREATE TABLE deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,   -- dlv_...
    tenant          TEXT    NOT NULL,
    event_id        TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    endpoint        TEXT    NOT NULL,
    flow            TEXT    NOT NULL,
    target          TEXT    NOT NULL,
    mode            TEXT    NOT NULL CHECK (mode IN ('sync', 'async_inline', 'async_relay')),
    edge            TEXT,
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'in_flight', 'succeeded', 'dead', 'replayed', 'cancelled')),
    attempts_made   BIGINT  NOT NULL DEFAULT 0,
    edge_hop_attempts    BIGINT NOT NULL DEFAULT 0,   -- control plane -> edge
    webhook_hop_attempts BIGINT NOT NULL DEFAULT 0,   -- -> the webhook
    max_attempts    BIGINT  NOT NULL,
    next_attempt_at BIGINT,
    lease_owner     TEXT,
    lease_until     BIGINT,
    lease_token     BIGINT  NOT NULL DEFAULT 0,
    current_attempt TEXT,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL,
    dead_at         BIGINT,
    exhausted_hop   TEXT CHECK (exhausted_hop IN ('control_plane_webhook', 'control_plane_edge', 'edge_webhook')),
    error_class     TEXT,
    last_status     BIGINT,
    replay_session  TEXT,
    replay_of       TEXT,
    replayed_by     TEXT
);

CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_lease ON deliveries (lease_until) WHERE state = 'in_flight';
CREATE INDEX deliveries_open_by_endpoint ON deliveries (tenant, endpoint) WHERE state IN ('pending', 'in_flight');
CREATE INDEX dlq_all ON deliveries (tenant, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_target ON deliveries (tenant, target, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_endpoint ON deliveries (tenant, endpoint, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_flow ON deliveries (tenant, flow, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_error_class ON deliveries (tenant, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_target_class ON deliveries (tenant, target, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_endpoint_class ON deliveries (tenant, endpoint, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_endpoint_target ON deliveries (tenant, endpoint, target, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX dlq_by_flow_class ON deliveries (tenant, flow, error_class, dead_at DESC, id DESC) WHERE state = 'dead';
CREATE INDEX deliveries_replay_session ON deliveries (replay_session) WHERE replay_session IS NOT NULL;

CREATE TABLE attempts (
    id           TEXT    NOT NULL PRIMARY KEY,  -- att_...
    delivery_id  TEXT    NOT NULL,
    number       BIGINT  NOT NULL,
    hop          TEXT    NOT NULL CHECK (hop IN ('control_plane_webhook', 'control_plane_edge', 'edge_webhook')),
    hop_number   BIGINT  NOT NULL,
    started_at   BIGINT  NOT NULL,
    duration_ms  BIGINT,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('in_flight', 'succeeded', 'failed')),
    status_code  BIGINT,
    error_class  TEXT,
    error        TEXT,
    performed_by TEXT    NOT NULL,
    finished_by  TEXT    CHECK (finished_by IN ('sender', 'reaper')),
    UNIQUE (delivery_id, number)
);

-- DLQ counters per (tenant, target, error class, hour), kept exact by a trigger on every
-- transition into and out of `dead`, so stats never scan the DLQ.
CREATE TABLE dlq_counts (
    tenant      TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    error_class TEXT    NOT NULL,
    hour        BIGINT  NOT NULL,   -- dead_at / 3600000
    count       BIGINT  NOT NULL,
    PRIMARY KEY (tenant, target, error_class, hour)
);

CREATE FUNCTION dlq_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'dead' AND (TG_OP = 'INSERT' OR OLD.state <> 'dead') THEN
        INSERT INTO dlq_counts (tenant, target, error_class, hour, count)
        VALUES (NEW.tenant, NEW.target, COALESCE(NEW.error_class, ''), NEW.dead_at / 3600000, 1)
        ON CONFLICT (tenant, target, error_class, hour) DO UPDATE SET count = dlq_counts.count + 1;
    ELSIF TG_OP = 'UPDATE' AND OLD.state = 'dead' AND NEW.state <> 'dead' THEN
        UPDATE dlq_counts SET count = count - 1
        WHERE tenant = OLD.tenant AND target = OLD.target
          AND error_class = COALESCE(OLD.error_class, '') AND hour = OLD.dead_at / 3600000;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER dlq_count_insert AFTER INSERT ON deliveries
    FOR EACH ROW WHEN (NEW.state = 'dead') EXECUTE FUNCTION dlq_count();
CREATE TRIGGER dlq_count_update AFTER UPDATE OF state ON deliveries
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION dlq_count();

CREATE TABLE replay_sessions (
    tenant       TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    fingerprint  BYTEA   NOT NULL,
    request      TEXT    NOT NULL,
    rate_per_s   DOUBLE PRECISION,
    created_at   BIGINT  NOT NULL,
    cancelled_at BIGINT,
    PRIMARY KEY (tenant, id)
);

CREATE INDEX replay_sessions_created ON replay_sessions (tenant, created_at DESC);

CREATE TABLE replay_items (
    tenant        TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    original_id   TEXT    NOT NULL,
    delivery_id   TEXT,
    skip_reason   TEXT,
    position      BIGINT  NOT NULL,
    PRIMARY KEY (tenant, session_id, original_id)
);
