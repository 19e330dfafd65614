-- Per-hop attempt budgets: every attempt records the hop it covered (control plane → webhook,
-- control plane → edge plane, edge plane → webhook) and its number within that hop; a
-- delivery counts each hop's attempts apart and, when it dies, records whose budget ran out.

ALTER TABLE attempts ADD COLUMN hop TEXT NOT NULL DEFAULT 'control_plane_webhook'
    CHECK (hop IN ('control_plane_webhook', 'control_plane_edge', 'edge_webhook'));
ALTER TABLE attempts ADD COLUMN hop_number INTEGER NOT NULL DEFAULT 0;

ALTER TABLE deliveries ADD COLUMN edge_hop_attempts INTEGER NOT NULL DEFAULT 0;    -- control plane → edge
ALTER TABLE deliveries ADD COLUMN webhook_hop_attempts INTEGER NOT NULL DEFAULT 0; -- → the webhook
ALTER TABLE deliveries ADD COLUMN exhausted_hop TEXT
    CHECK (exhausted_hop IN ('control_plane_webhook', 'control_plane_edge', 'edge_webhook'));

-- Attempts made before: an edge plane's went to the webhook; the control plane's own on a
-- relay delivery were unpicked hand-offs to the edge.
UPDATE attempts SET hop = 'edge_webhook' WHERE performed_by LIKE 'edge:%';
UPDATE attempts SET hop = 'control_plane_edge'
    WHERE performed_by NOT LIKE 'edge:%'
      AND delivery_id IN (SELECT id FROM deliveries WHERE mode = 'async_relay');
UPDATE attempts SET hop_number = (
    SELECT COUNT(*) FROM attempts earlier
    WHERE earlier.delivery_id = attempts.delivery_id AND earlier.hop = attempts.hop
      AND earlier.number <= attempts.number);
UPDATE deliveries SET
    edge_hop_attempts = (SELECT COUNT(*) FROM attempts a
                         WHERE a.delivery_id = deliveries.id AND a.hop = 'control_plane_edge'),
    webhook_hop_attempts = (SELECT COUNT(*) FROM attempts a
                            WHERE a.delivery_id = deliveries.id AND a.hop <> 'control_plane_edge')
    WHERE attempts_made > 0;
UPDATE deliveries SET exhausted_hop = (
    SELECT a.hop FROM attempts a WHERE a.delivery_id = deliveries.id ORDER BY a.number DESC LIMIT 1)
    WHERE state IN ('dead', 'replayed');
