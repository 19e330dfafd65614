-- Guided credential rotations (docs/rotation.md "From the console"): one row per procedure,
-- stage → verify → promote (or roll back), so quitting or killing the console mid-step resumes
-- where it was. The row never holds a secret's value. Each step's request is a row of the
-- existing keyed outboxes (`secret_ops` for stage / promote / roll back, `target_tests` for
-- verify) whose Idempotency-Key is derived from the rotation id and the step
-- (`<id>:stage`, `<id>:verify:<n>`, `<id>:promote:<secret id>`, `<id>:rollback`): a resumed
-- step resends the same key and the control plane acts once. Every step change is one guarded
-- `UPDATE … WHERE id = ? AND step = ?`, so of two processes advancing a rotation one wins.
CREATE TABLE rotations (
    -- `rot_<uuid>`, minted once by the core.
    id                 TEXT PRIMARY KEY,
    profile            TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
    target             TEXT NOT NULL,
    -- What is rotated: a signing secret (client certificates are room left for later).
    credential         TEXT NOT NULL DEFAULT 'secret' CHECK (credential IN ('secret', 'certificate')),
    step               TEXT NOT NULL CHECK (step IN ('staging', 'staged', 'verifying', 'verified',
                       'promoting', 'done', 'rolling_back', 'rolled_back', 'needs_attention')),
    -- The step a rotation was at when it came to need attention.
    stopped_step       TEXT,
    -- The overlap asked for (NULL: the server's default) and whether the stage was forced.
    overlap_seconds    INTEGER,
    force              INTEGER NOT NULL DEFAULT 0,
    -- The rows of the keyed outboxes that carry the steps.
    stage_op           INTEGER REFERENCES secret_ops(id),
    verify_test        INTEGER REFERENCES target_tests(id),
    -- Verify attempts started (each has its own key, `<id>:verify:<n>`).
    verify_attempts    INTEGER NOT NULL DEFAULT 0,
    -- From the stage's answer: the new secret's id, and the older ones with their expiry
    -- (JSON `[{id, expires_at}]`). Never the value.
    new_secret_id      TEXT,
    old_secrets        TEXT,
    -- The last verify: JSON `{ok, status, latency_ms, error, webhook_id, tested_at}`.
    verify_result      TEXT,
    -- The person said the value is stored (after that it is never shown again).
    acknowledged_at    INTEGER,
    -- needs_attention: the server's problem or what went wrong (OpError JSON).
    problem            TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    finished_at        INTEGER
);
-- At most one open rotation per target (the steps a procedure is still in).
CREATE UNIQUE INDEX rotations_open_per_target ON rotations (profile, target)
    WHERE step IN ('staging', 'staged', 'verifying', 'verified', 'promoting', 'rolling_back');
CREATE INDEX rotations_by_profile ON rotations (profile, created_at);
