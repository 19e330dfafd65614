-- GitOps: the sources a profile reconciles from Git, the resources each source manages (its
-- inventory: what a prune may ever delete), and every write an apply queued.

CREATE TABLE gitops_sources (
    profile        TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    -- '<absolute repository path>:<folder>'; part of every write's idempotency key.
    source         TEXT NOT NULL,
    repo           TEXT NOT NULL,
    git_ref        TEXT NOT NULL,
    path           TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    -- The last commit whose apply was queued, and the last whose every write was confirmed.
    queued_commit  TEXT,
    queued_at      INTEGER,
    applied_commit TEXT,
    applied_at     INTEGER,
    PRIMARY KEY (profile, source)
) WITHOUT ROWID;

-- One row per resource a source manages. A resource belongs to at most one source per profile.
-- `created` = 1 only once a GitOps create of it was confirmed: only those may be pruned.
-- `spec` is what Git last applied (canonical JSON): drift is live state against it.
CREATE TABLE gitops_inventory (
    profile    TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    source     TEXT NOT NULL,
    created    INTEGER NOT NULL,
    spec       TEXT NOT NULL,
    commit_id  TEXT NOT NULL,
    path       TEXT NOT NULL,
    -- The version GitOps' last confirmed write produced (NULL when adopted unchanged).
    version    INTEGER,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (profile, kind, name)
) WITHOUT ROWID;
CREATE INDEX gitops_inventory_source ON gitops_inventory (profile, source);

-- Every GitOps write, recorded by the trigger below in the same statement as its outbox row,
-- so no crash can leave one without the other. `folded` = 1 once its outcome (confirmed,
-- discarded, superseded) has been folded into the inventory.
CREATE TABLE gitops_ops (
    op_id     INTEGER PRIMARY KEY REFERENCES outbox(id) ON DELETE CASCADE,
    profile   TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    source    TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    path      TEXT NOT NULL,
    kind      TEXT NOT NULL,
    name      TEXT NOT NULL,
    op        TEXT NOT NULL,
    folded    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX gitops_ops_unfolded ON gitops_ops (profile) WHERE folded = 0;
CREATE INDEX gitops_ops_commit ON gitops_ops (profile, source, commit_id);

CREATE TRIGGER outbox_gitops AFTER INSERT ON outbox
WHEN NEW.origin IS NOT NULL AND json_extract(NEW.origin, '$.via') = 'gitops'
BEGIN
    INSERT INTO gitops_ops (op_id, profile, source, commit_id, path, kind, name, op)
    VALUES (NEW.id, NEW.profile, json_extract(NEW.origin, '$.source'),
            json_extract(NEW.origin, '$.commit'), json_extract(NEW.origin, '$.path'),
            NEW.kind, NEW.name, NEW.op);
END;
