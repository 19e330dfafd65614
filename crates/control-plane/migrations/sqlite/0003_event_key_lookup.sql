-- Event lookup by key (`GET /v1/events?event_key=K[&endpoint=E]`), newest first. `event_keys`
-- only holds the latest event of a key inside the dedup window; this finds every one.
CREATE INDEX events_by_key ON events (tenant, event_key, created_at DESC, id DESC)
    WHERE event_key IS NOT NULL;
