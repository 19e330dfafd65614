-- Test webhooks ("Send test webhook", `switchyard targets test`): queued like every other
-- write, sent by `sync_target_tests` as `POST /v1/targets/{target}/test` with the row's
-- Idempotency-Key, minted once here, so a resend never makes the control plane send a second
-- test webhook (it replays its stored result; the receiver sees one `webhook-id`).
CREATE TABLE target_tests (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    profile         TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    target          TEXT NOT NULL,
    -- The request body (TargetTestRequest JSON).
    body            TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    state           TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'done', 'needs_attention')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    -- The server's answer when done (TargetTestResult JSON: what the receiver answered).
    result          TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX target_tests_pending ON target_tests (profile, state) WHERE state = 'pending';
CREATE INDEX target_tests_by_target ON target_tests (profile, target, id);
