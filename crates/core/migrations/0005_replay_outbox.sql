-- Replay-session writes (start, cancel): queued like resource writes, sent by `sync_replays`.
-- The session id of a start is minted once, here, and kept: every resend is
-- `PUT /v1/replays/{session_id}` with the same body, which the server answers 200 with the
-- same session. A cancel carries an Idempotency-Key minted once, here.
CREATE TABLE replay_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    profile         TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    -- 'start' | 'cancel'
    action          TEXT NOT NULL CHECK (action IN ('start', 'cancel')),
    session_id      TEXT NOT NULL,
    -- The request body (start: the ReplayRequest JSON; cancel: NULL).
    body            TEXT,
    idempotency_key TEXT NOT NULL,
    -- 'pending' | 'done' | 'needs_attention'
    state           TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    -- The server's answer when done (the session JSON).
    result          TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (profile, action, session_id)
);
CREATE INDEX replay_outbox_live ON replay_outbox (profile, state) WHERE state = 'pending';
