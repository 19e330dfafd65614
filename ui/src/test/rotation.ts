// A rotation as the core hands it to the UI, for the wizard's and the rules' tests.
import type { RotationView } from "../ipc/bindings";

export function rotation(over: Partial<RotationView> = {}): RotationView {
  return {
    id: "rot_1",
    profile: "sandbox",
    target: "billing",
    credential: "secret",
    step: "staging",
    stopped_step: null,
    overlap_seconds: null,
    force: false,
    pending_keys: ["rot_1:stage"],
    new_secret_id: null,
    old_secrets: [],
    new_certificate_id: null,
    old_certificate_id: null,
    new_certificate: null,
    old_certificate: null,
    verify_attempts: 0,
    verify_result: null,
    acknowledged: false,
    problem: null,
    actions: {
      resume: true,
      verify: false,
      promote: false,
      promote_skipping_verify: false,
      roll_back: false,
    },
    created_at: 0,
    updated_at: 0,
    finished_at: null,
    ...over,
  };
}
