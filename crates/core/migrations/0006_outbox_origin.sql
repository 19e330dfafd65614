-- Who queued an op, beyond the console's actor: NULL for a person at the console (desktop or
-- CLI); else the JSON of an `Origin` ({"via":"mcp","client":…} or {"via":"gitops",…}).
-- Ops queued with a caller-chosen idempotency key (an MCP request key, a GitOps content key)
-- are found again by that key (the UNIQUE index on idempotency_key).
ALTER TABLE outbox ADD COLUMN origin TEXT;
