-- Fewer pages touched per write: the cache keyed by its primary key directly (WITHOUT ROWID,
-- no separate index), and no per-profile audit index (the log is read newest-first by id).
DROP TRIGGER outbox_enqueue_cache;

CREATE TABLE cache_v2 (
    profile        TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    kind           TEXT NOT NULL,
    name           TEXT NOT NULL,
    server_json    TEXT,
    server_version INTEGER,
    local_json     TEXT,
    local_deleted  INTEGER NOT NULL DEFAULT 0,
    refreshed_at   INTEGER,
    PRIMARY KEY (profile, kind, name)
) WITHOUT ROWID;
INSERT INTO cache_v2 (profile, kind, name, server_json, server_version, local_json, local_deleted, refreshed_at)
    SELECT profile, kind, name, server_json, server_version, local_json, local_deleted, refreshed_at FROM cache;
DROP TABLE cache;
ALTER TABLE cache_v2 RENAME TO cache;

CREATE TRIGGER outbox_enqueue_cache AFTER INSERT ON outbox
BEGIN
    INSERT INTO cache (profile, kind, name, local_json, local_deleted)
    VALUES (NEW.profile, NEW.kind, NEW.name,
            CASE WHEN NEW.local_after = 'null' THEN NULL ELSE NEW.local_after END,
            NEW.local_after = 'null')
    ON CONFLICT (profile, kind, name) DO UPDATE SET
        local_json = excluded.local_json, local_deleted = excluded.local_deleted;
END;

DROP INDEX audit_profile;
