-- Client-certificate activations (`switchyard targets activate-cert`): keyed writes committed
-- here before they are sent, with an Idempotency-Key minted once, so a timeout or a crash is
-- resumed with the same key and the control plane activates once (the secret_ops pattern).
-- Uploads are not queued here: `PUT …/client-certificates/{id}` is idempotent by its id, so the
-- CLI sends it directly and retries it as it is; the private key is never written to this
-- database.
CREATE TABLE cert_ops (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    profile         TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    target          TEXT NOT NULL,
    action          TEXT NOT NULL CHECK (action IN ('activate')),
    cert_id         TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    state           TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'done', 'needs_attention')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    result          TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX cert_ops_by_target ON cert_ops (profile, target, id);
