-- Signing-secret rotations and expiries (`switchyard targets rotate-secret` / `expire-secret`):
-- keyed writes committed here before they are sent, with an Idempotency-Key minted once, so a
-- timeout or a crash is resumed with the same key and the control plane rotates once. The new
-- secret's value is never stored here: `result` is the server's answer without it (the value is
-- shown to the person from the answer in memory, and a resend with the key shows it again
-- while the server still keeps the key).
CREATE TABLE secret_ops (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    profile         TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    target          TEXT NOT NULL,
    action          TEXT NOT NULL CHECK (action IN ('rotate', 'expire')),
    -- expire: the secret it ends.
    secret_id       TEXT,
    -- The request body (rotate: RotateSecretRequest JSON; expire: NULL).
    body            TEXT,
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
CREATE INDEX secret_ops_by_target ON secret_ops (profile, target, id);
