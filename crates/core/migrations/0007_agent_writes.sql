-- Writes queued by agents (`switchyard mcp`):
-- * a profile an operator marks read-only for agents refuses every write whose origin is an
--   agent, whatever flags the agent's server was started with;
-- * the fingerprint of the request that queued a keyed write (the canonical JSON of a tool
--   call's arguments, hashed), compared when the same key comes again;
-- * replay starts keep who queued them, as resource writes do (`outbox.origin`), and the
--   fingerprint of the request, keyed by the session id the caller derived.
ALTER TABLE profiles ADD COLUMN agents_read_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN request_fingerprint TEXT;
ALTER TABLE replay_outbox ADD COLUMN origin TEXT;
ALTER TABLE replay_outbox ADD COLUMN request_fingerprint TEXT;
