-- Retirement sessions (src/retirement/): one row per (tenant, id), claimed by
-- INSERT ... ON CONFLICT DO NOTHING; every transition is an UPDATE guarded by the state it
-- leaves, committed with its effect.
CREATE TABLE retirements (
    tenant          TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    fingerprint     BLOB    NOT NULL,   -- SHA-256 of the canonical request body
    kind            TEXT    NOT NULL CHECK (kind IN ('endpoint', 'target', 'flow')),
    name            TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('blocked', 'draining', 'disabled', 'scheduled', 'deleted', 'cancelled')),
    grace_seconds   INTEGER NOT NULL,
    cascade_flows   INTEGER NOT NULL,   -- 0 or 1
    dlq             TEXT    NOT NULL CHECK (dlq IN ('keep', 'purge')),
    blockers        TEXT    NOT NULL,   -- JSON array of blockers
    impact          TEXT    NOT NULL,   -- JSON impact, as last counted
    cascaded_flows  TEXT    NOT NULL,   -- JSON array of flow names
    enabled_before  INTEGER,            -- an endpoint's `enabled` before draining disabled it
    drain_eta       INTEGER,            -- unix ms
    delete_at       INTEGER,            -- unix ms
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (tenant, id)
) WITHOUT ROWID;

CREATE INDEX retirements_created ON retirements (tenant, created_at DESC, id DESC);
-- What the advancer walks: the retirements not yet final.
CREATE INDEX retirements_open ON retirements (updated_at) WHERE state NOT IN ('deleted', 'cancelled');

-- Every state a retirement entered. No unique key on the state on purpose: the transition's
-- guard is what makes each entry happen once, and the tests count the entries to prove it.
CREATE TABLE retirement_history (
    tenant        TEXT    NOT NULL,
    retirement_id TEXT    NOT NULL,
    state         TEXT    NOT NULL,
    at            INTEGER NOT NULL
);

CREATE INDEX retirement_history_of ON retirement_history (tenant, retirement_id, at);

-- Tombstones: what a retirement deleted, as it was, for the audit trail.
CREATE TABLE deleted_resources (
    tenant        TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    spec          TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    deleted_at    INTEGER NOT NULL,
    retirement_id TEXT    NOT NULL
);

CREATE INDEX deleted_resources_by_name ON deleted_resources (tenant, kind, name, deleted_at);

-- A purged dead delivery leaves the DLQ counters too.
CREATE TRIGGER dlq_count_delete AFTER DELETE ON deliveries WHEN OLD.state = 'dead'
BEGIN
    UPDATE dlq_counts SET count = count - 1
    WHERE tenant = OLD.tenant AND target = OLD.target
      AND error_class = COALESCE(OLD.error_class, '') AND hour = OLD.dead_at / 3600000;
END;

-- At most one open retirement per resource: a second one is refused (`resource_retiring`)
-- by the same guarded insert that claims the id.
CREATE UNIQUE INDEX retirements_one_open ON retirements (tenant, kind, name)
    WHERE state NOT IN ('deleted', 'cancelled');
