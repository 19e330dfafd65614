-- API tokens with a role (src/auth/, docs/security.md "Roles and tokens"). The value is shown
-- once, in the answer of POST /v1/tokens (itself stored sealed with its Idempotency-Key);
-- the server keeps only its SHA-256, which is what a request's token is looked up by. A
-- token is 32 random bytes, so an unsalted fast hash is enough: there is nothing to guess.
-- Revocation is a guarded UPDATE; every replica reads this table on each request made with
-- such a token, so a revocation holds everywhere at once.
CREATE TABLE api_tokens (
    tenant       TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    role         TEXT    NOT NULL CHECK (role IN ('viewer', 'operator', 'admin', 'edge')),
    token_sha256 BLOB    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,   -- unix ms
    last_used_at INTEGER,            -- unix ms, written at most once a minute
    revoked_at   INTEGER,            -- unix ms
    PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
-- A name names one live token of the tenant.
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (tenant, name) WHERE revoked_at IS NULL;
