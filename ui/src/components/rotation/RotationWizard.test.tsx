import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { RotationView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { rotation } from "../../test/rotation";
import { RotationWizard } from "./RotationWizard";

const actions = (over: Partial<RotationView["actions"]> = {}): RotationView["actions"] => ({
  resume: false,
  verify: false,
  promote: false,
  promote_skipping_verify: false,
  roll_back: false,
  ...over,
});

const staged = (over: Partial<RotationView> = {}) =>
  rotation({
    step: "staged",
    new_secret_id: "sec_new",
    old_secrets: [{ id: "sec_old", expires_at: "2026-12-02T12:00:00Z" }],
    pending_keys: [],
    actions: actions({ verify: true, promote_skipping_verify: true, roll_back: true }),
    ...over,
  });

describe("RotationWizard", () => {
  it("stages, shows the value once, verifies, refuses a blind promote, and promotes", async () => {
    let current = staged();
    const calls = mockCommands({
      list_rotations: () => [],
      start_rotation: () => ({ rotation: current, value: "whsec_bmV3" }),
      acknowledge_secret: () => {
        current = { ...current, acknowledged: true };
        return current;
      },
      verify_rotation: () => {
        current = {
          ...current,
          step: "verified",
          verify_attempts: 1,
          verify_result: {
            ok: true,
            certificate_presented: null,
            status: 204,
            latency_ms: 4,
            error: null,
            webhook_id: "msg_1",
            tested_at: null,
            attempt: 1,
          },
          actions: actions({ promote: true, roll_back: true }),
        };
        return current;
      },
      promote_rotation: ({ skipVerify }) => {
        expect(skipVerify).toBe(false);
        current = { ...current, step: "done", actions: actions() };
        return current;
      },
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await userEvent.click(await screen.findByTestId("rotation-next"));
    await userEvent.click(screen.getByTestId("rotation-stage"));
    expect(await screen.findByTestId("rotation-secret-value")).toHaveTextContent("whsec_bmV3");
    expect(screen.getByTestId("rotation-instructions")).toHaveTextContent("beside the current one");
    await userEvent.click(screen.getByTestId("rotation-stored"));
    // Stored: the value is gone from the screen; the verify step is next.
    await waitFor(() => expect(screen.queryByTestId("rotation-secret-value")).toBeNull());
    expect(screen.queryByTestId("rotation-promote")).toBeNull();
    await userEvent.click(screen.getByTestId("rotation-verify"));
    expect(await screen.findByTestId("rotation-verify-result")).toHaveTextContent(
      "accepted the new secret alone: HTTP 204 in 4 ms",
    );
    await userEvent.click(screen.getByTestId("rotation-promote"));
    expect(await screen.findByTestId("rotation-final-step")).toHaveTextContent("Done");
    const start = calls.find(([c]) => c === "start_rotation");
    expect(start?.[1]).toMatchObject({
      profile: "sandbox",
      input: { target: "billing", overlap_seconds: null, force: false },
    });
  });

  it("resumes the target's open rotation instead of starting another", async () => {
    const open = staged({ acknowledged: true });
    const calls = mockCommands({
      list_rotations: () => [rotation({ target: "other", step: "staged" }), open],
      resume_rotation: () => ({ rotation: open, value: null }),
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    expect(await screen.findByTestId("rotation-verify")).toBeInTheDocument();
    expect(screen.getByTestId("rotation-id")).toHaveTextContent("rot_1");
    expect(calls.some(([c]) => c === "start_rotation")).toBe(false);
    expect(calls.find(([c]) => c === "resume_rotation")?.[1]).toEqual({ id: "rot_1" });
  });

  it("asks before a roll back and before promoting without a verify", async () => {
    const open = staged({ acknowledged: true });
    let rolled = false;
    mockCommands({
      list_rotations: () => [open],
      resume_rotation: () => ({ rotation: open, value: null }),
      rollback_rotation: () => {
        rolled = true;
        return { ...open, step: "rolled_back", actions: actions() };
      },
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await userEvent.click(await screen.findByTestId("rotation-skip"));
    expect(screen.getByText("Promote without a successful verify?")).toBeInTheDocument();
    // Each question can be answered "no": the wizard is then as it was.
    await userEvent.click(screen.getByTestId("rotation-skip-keep"));
    expect(screen.queryByTestId("rotation-skip-ask")).toBeNull();
    expect(screen.getByTestId("rotation-skip")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("rotation-rollback"));
    expect(screen.getByTestId("rotation-rollback-ask")).toHaveTextContent("old one keeps signing");
    await userEvent.click(screen.getByTestId("rotation-rollback-keep"));
    expect(screen.queryByTestId("rotation-rollback-ask")).toBeNull();
    expect(screen.queryByTestId("rotation-rollback-confirm")).toBeNull();
    expect(rolled).toBe(false);
    await userEvent.click(screen.getByTestId("rotation-rollback"));
    await userEvent.click(screen.getByTestId("rotation-rollback-confirm"));
    expect(await screen.findByTestId("rotation-final-step")).toHaveTextContent("Rolled back");
    expect(rolled).toBe(true);
  });

  it("after a roll back, marks done only the steps that happened", async () => {
    const open = staged({ acknowledged: true });
    mockCommands({
      list_rotations: () => [open],
      resume_rotation: () => ({ rotation: open, value: null }),
      rollback_rotation: () => ({ ...open, step: "rolled_back", actions: actions() }),
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await userEvent.click(await screen.findByTestId("rotation-rollback"));
    await userEvent.click(screen.getByTestId("rotation-rollback-confirm"));
    await screen.findByTestId("rotation-final-step");
    const stepper = screen.getByTestId("rotation-stepper");
    const done = [...stepper.querySelectorAll("button[data-completed]")].map((e) => e.textContent);
    // Never verified, never promoted: neither is shown as done.
    expect(done).toEqual(["Choose", "Stage", "Roll back"].map((l) => expect.stringContaining(l)));
    expect(stepper).not.toHaveTextContent("Promote");
    expect(stepper).not.toHaveTextContent("Verify");
  });

  it("goes back from the stage step to the choice, before anything is saved", async () => {
    const calls = mockCommands({ list_rotations: () => [] });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await userEvent.click(await screen.findByTestId("rotation-choose-certificate"));
    await userEvent.click(screen.getByTestId("rotation-next"));
    expect(screen.getByTestId("rotation-stage")).toHaveTextContent("Upload new certificate");
    await userEvent.click(screen.getByTestId("rotation-back"));
    // The choice is as it was left, and can be changed.
    expect(screen.getByTestId("rotation-next")).toBeInTheDocument();
    expect(screen.getByTestId("rotation-choose-certificate")).toBeChecked();
    await userEvent.click(screen.getByTestId("rotation-choose-secret"));
    await userEvent.click(screen.getByTestId("rotation-next"));
    expect(screen.getByTestId("rotation-stage")).toHaveTextContent("Stage new secret");
    expect(calls.some(([c]) => c.startsWith("start_"))).toBe(false);
  });

  it("keeps a refused step visible with the control plane's problem", async () => {
    mockCommands({
      list_rotations: () => [],
      start_rotation: () => {
        throw {
          code: "conflict",
          message: "the target already has an open rotation",
          problem: null,
        };
      },
    });
    renderUi(<RotationWizard target="billing" onClose={() => {}} />);
    await userEvent.click(await screen.findByTestId("rotation-next"));
    await userEvent.click(screen.getByTestId("rotation-stage"));
    expect(await screen.findByTestId("error-alert")).toHaveTextContent(
      "already has an open rotation",
    );
    expect(screen.getByTestId("rotation-stage")).toBeEnabled();
  });
});
