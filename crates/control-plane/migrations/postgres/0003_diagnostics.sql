-- Diagnostics (GET /v1/diagnostics, src/diagnostics/): an index behind every check, so each
-- costs the size of the problem it looks for, not of the delivery history; and when each
-- edge plane last called lease, so a silent edge can be told from an idle one.

-- stuck_delivery: a tenant's in-flight deliveries by lease expiry.
CREATE INDEX deliveries_lease_by_tenant ON deliveries (tenant, lease_until) WHERE state = 'in_flight';
-- edge_unreachable: pending relay deliveries per edge, oldest first.
CREATE INDEX deliveries_relay_waiting ON deliveries (tenant, edge, created_at)
    WHERE state = 'pending' AND mode = 'async_relay';
-- disabled_endpoint_backlog: an endpoint's open deliveries, oldest first.
CREATE INDEX deliveries_open_by_endpoint_age ON deliveries (tenant, endpoint, created_at)
    WHERE state IN ('pending', 'in_flight');
-- stalled_replay: a session's pending re-deliveries by due time.
CREATE INDEX deliveries_replay_pending ON deliveries (tenant, replay_session, next_attempt_at)
    WHERE state = 'pending' AND replay_session IS NOT NULL;

-- The last lease call of each edge plane (written at most once a second per edge).
CREATE TABLE edge_contacts (
    tenant         TEXT    NOT NULL,
    edge           TEXT    NOT NULL,
    last_leased_at BIGINT  NOT NULL,   -- unix ms
    PRIMARY KEY (tenant, edge)
);
