-- Recovery writes (`switchyard doctor fix`, `switchyard retire`, the desktop Recovery page):
-- a server finding's fix action, a retirement start (`PUT /v1/retirements/{id}`) and a
-- retirement cancel, each committed here before it is sent, with an Idempotency-Key minted
-- once, so a lost answer, a retry or a restart sends the same request and the control plane
-- acts once. A retirement's id is chosen here too (`subject`), before the first send.
CREATE TABLE recovery_ops (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    profile         TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    action          TEXT NOT NULL CHECK (action IN ('fix', 'retire', 'retire_cancel')),
    -- fix: the finding id it fixes; retire / retire_cancel: the retirement id.
    subject         TEXT NOT NULL,
    -- What it does, in a few words (the fix action's label, "retire target crm").
    label           TEXT NOT NULL,
    method          TEXT NOT NULL CHECK (method IN ('POST', 'PUT', 'PATCH', 'DELETE')),
    path            TEXT NOT NULL,
    -- The JSON request body, or NULL for none.
    body            TEXT,
    destructive     INTEGER NOT NULL DEFAULT 0,
    idempotency_key TEXT NOT NULL UNIQUE,
    state           TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'done', 'needs_attention')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    -- The server's answer once done.
    result          TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
-- One start and one cancel per retirement id.
CREATE UNIQUE INDEX recovery_ops_retirement ON recovery_ops (profile, action, subject)
    WHERE action IN ('retire', 'retire_cancel');
CREATE INDEX recovery_ops_pending ON recovery_ops (profile, state) WHERE state = 'pending';

-- The last answer of `GET /v1/diagnostics` per profile, so the Recovery page and
-- `doctor fix` can queue a server fix while the control plane is unreachable (the fix is
-- then sent, keyed, when it is back). Findings carry no secrets.
CREATE TABLE server_diagnostics (
    profile    TEXT PRIMARY KEY REFERENCES profiles(name) ON DELETE CASCADE,
    body       TEXT NOT NULL,
    fetched_at INTEGER NOT NULL
);
