-- Managed resources: endpoints, targets and flows, one row per (tenant, kind, name).
CREATE TABLE resources (
    tenant      TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('endpoint', 'target', 'flow')),
    name        TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 1),
    spec        TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL, -- unix milliseconds
    updated_at  INTEGER NOT NULL,
    -- What a flow points at, so "who uses this endpoint/target" is an index lookup.
    ref_endpoint TEXT GENERATED ALWAYS AS (CASE WHEN kind = 'flow' THEN json_extract(spec, '$.endpoint') END) VIRTUAL,
    ref_target   TEXT GENERATED ALWAYS AS (CASE WHEN kind = 'flow' THEN json_extract(spec, '$.target') END) VIRTUAL,
    PRIMARY KEY (tenant, kind, name)
) WITHOUT ROWID;

CREATE INDEX resources_flow_endpoint ON resources (tenant, ref_endpoint) WHERE kind = 'flow';
CREATE INDEX resources_flow_target ON resources (tenant, ref_target) WHERE kind = 'flow';

-- Webhook signing secrets of targets. The value is needed to sign deliveries; only ids and
-- expiry are ever shown after the response that created it.
CREATE TABLE signing_secrets (
    tenant      TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    PRIMARY KEY (tenant, target, id)
) WITHOUT ROWID;

-- The Idempotency-Key store (contract rules 1-10). One row per (tenant, key), claimed
-- atomically by INSERT ... ON CONFLICT DO NOTHING.
CREATE TABLE idempotency_keys (
    tenant           TEXT    NOT NULL,
    key              TEXT    NOT NULL,
    fingerprint      BLOB    NOT NULL,           -- SHA-256 of method, path, If-Match, canonical body
    state            TEXT    NOT NULL CHECK (state IN ('in_progress', 'completed')),
    attempt          INTEGER NOT NULL,           -- fencing token: bumped by every lease takeover
    locked_until     INTEGER NOT NULL,           -- lease expiry of an in-progress claim (unix ms)
    created_at       INTEGER NOT NULL,
    response_status  INTEGER,
    response_headers TEXT,                       -- JSON array of [name, value]
    response_body    BLOB,
    PRIMARY KEY (tenant, key)
) WITHOUT ROWID;

CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
