-- Targets whose creation was confirmed with a first signing secret that no person has seen
-- yet. The value itself is never stored: a row says only that the creation (outbox op
-- `op_id`, whose request and Idempotency-Key the outbox keeps) still owes its one showing. The
-- row is written in the transaction that marks the creation done and removed once a screen or
-- terminal took the value, so a sync interrupted in between (a stop signal, kill -9) leaves it;
-- the next `sync` or `targets secrets --reveal-pending` sends the same keyed request again and
-- the control plane answers with its stored response, secret included, while it keeps the key
-- (crates/core/src/owed_secrets.rs).
CREATE TABLE owed_secrets (
    op_id        INTEGER PRIMARY KEY REFERENCES outbox(id) ON DELETE CASCADE,
    profile      TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    target       TEXT NOT NULL,
    confirmed_at INTEGER NOT NULL
);
CREATE INDEX owed_secrets_by_profile ON owed_secrets (profile, target);
