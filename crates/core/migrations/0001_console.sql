-- The console's local state: profiles (no tokens), the resource cache, the outbox, the audit log.

CREATE TABLE profiles (
    name        TEXT PRIMARY KEY,
    url         TEXT NOT NULL,
    -- 'keychain' | 'file' | 'memory'. The token itself is never stored in this database.
    token_store TEXT NOT NULL,
    sandbox     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);

-- Last confirmed server state (server_json, a wire Resource) and the optimistic local view.
CREATE TABLE cache (
    profile       TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    server_json   TEXT,
    server_version INTEGER,
    -- NULL local_json with local_deleted = 1: deleted locally.
    local_json    TEXT,
    local_deleted INTEGER NOT NULL DEFAULT 0,
    refreshed_at  INTEGER,
    PRIMARY KEY (profile, kind, name)
);

CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Order of the operator's intent; a retry-as-new op takes the seq of the op it replaces.
    seq             INTEGER NOT NULL,
    profile         TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    op              TEXT NOT NULL,
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    body            TEXT,
    -- The spec the operator edited (for the three-way view) and its server version.
    base_json       TEXT,
    base_version    INTEGER,
    -- Fixed before the first send and never changed: it is part of the request fingerprint.
    if_match        INTEGER,
    if_match_fixed  INTEGER NOT NULL DEFAULT 0,
    -- Whether If-Match comes from the version this op's predecessor produced.
    chained         INTEGER NOT NULL DEFAULT 0,
    -- Other resources ('kind/name', or 'flow/*') whose earlier ops must land first.
    after_keys      TEXT NOT NULL DEFAULT '[]',
    idempotency_key TEXT NOT NULL UNIQUE,
    state           TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    failures        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    first_sent_at   INTEGER,
    result_version  INTEGER,
    replaced_by     INTEGER,
    lease_owner     TEXT,
    lease_until     INTEGER,
    lease_epoch     INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX outbox_live ON outbox (profile, state, seq);
CREATE INDEX outbox_resource ON outbox (profile, kind, name, seq);

CREATE TABLE audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    profile  TEXT,
    action   TEXT NOT NULL,
    op_id    INTEGER,
    resource TEXT,
    outcome  TEXT NOT NULL,
    detail   TEXT
);

CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_profile ON audit (profile, at);
