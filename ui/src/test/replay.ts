// Replay fixtures shared by the component tests.
import type { ReplayItemView } from "../ipc/bindings";

/** Item `n` of a session whose re-delivery to `target` failed its 5 attempts with HTTP 500. */
export const failedItem = (n: number, target = "legacy-erp"): ReplayItemView => ({
  original_delivery_id: `dlv_o${n}`,
  delivery_id: `dlv_r${n}`,
  status: "failed",
  reason: null,
  redelivery: {
    target,
    attempts_made: 5,
    max_attempts: 5,
    next_attempt_at: null,
    error_class: "http_5xx",
    last_status_code: 500,
  },
});
