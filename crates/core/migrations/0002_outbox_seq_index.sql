-- New ops take MAX(seq) + 1: keep that lookup O(log n).
CREATE INDEX outbox_seq ON outbox (seq);

-- Enqueue in one statement: the outbox row carries who queued it and the resulting local
-- view; triggers write the optimistic cache change and the audit entry in the same
-- transaction (and the same statement) as the row.
ALTER TABLE outbox ADD COLUMN actor TEXT NOT NULL DEFAULT 'unknown';
-- The local view after this op ('null' text = deleted locally), at enqueue time.
ALTER TABLE outbox ADD COLUMN local_after TEXT;

CREATE TRIGGER outbox_enqueue_cache AFTER INSERT ON outbox
BEGIN
    INSERT INTO cache (profile, kind, name, local_json, local_deleted)
    VALUES (NEW.profile, NEW.kind, NEW.name,
            CASE WHEN NEW.local_after = 'null' THEN NULL ELSE NEW.local_after END,
            NEW.local_after = 'null')
    ON CONFLICT (profile, kind, name) DO UPDATE SET
        local_json = excluded.local_json, local_deleted = excluded.local_deleted;
END;

CREATE TRIGGER outbox_enqueue_audit AFTER INSERT ON outbox
BEGIN
    INSERT INTO audit (at, actor, profile, action, op_id, resource, outcome, detail)
    VALUES (NEW.created_at, NEW.actor, NEW.profile, 'write.enqueue', NEW.id,
            NEW.kind || '/' || NEW.name, 'ok', NEW.op);
END;
