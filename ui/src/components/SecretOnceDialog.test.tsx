import { emit } from "@tauri-apps/api/event";
import { act, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { CORE_EVENT, type ShownSecretView } from "../ipc/bindings";
import { mockCommands, renderUi } from "../test/render";
import { SecretOnceDialog } from "./SecretOnceDialog";

describe("SecretOnceDialog", () => {
  it("shows a created target's secret when the core announces it, once, and forgets it on close", async () => {
    // The core hands each value out once: a second take answers nothing.
    let waiting: ShownSecretView[] = [];
    const calls = mockCommands({
      take_shown_secrets: () => {
        const taken = waiting;
        waiting = [];
        return taken;
      },
    });
    renderUi(<SecretOnceDialog />);
    await waitFor(() => expect(calls.some(([c]) => c === "take_shown_secrets")).toBe(true));
    expect(screen.queryByTestId("secret-once")).not.toBeInTheDocument();

    waiting = [{ target: "crm", secret_id: "sec_1", value: "whsec_c2VjcmV0" }];
    await act(() => emit(CORE_EVENT, { type: "secret_shown", profile: "sandbox", target: "crm" }));
    expect(await screen.findByTestId("secret-value")).toHaveTextContent("whsec_c2VjcmV0");
    expect(screen.getByText("Secret id sec_1")).toBeInTheDocument();
    expect(screen.getByText("Shown once")).toBeInTheDocument();

    await userEvent.click(screen.getByTestId("secret-stored"));
    await waitFor(() => expect(screen.queryByTestId("secret-once")).not.toBeInTheDocument());
    // Another profile's announcement is not this one's to show.
    waiting = [{ target: "other", secret_id: null, value: "whsec_b3RoZXI" }];
    await act(() => emit(CORE_EVENT, { type: "secret_shown", profile: "prod", target: "other" }));
    expect(screen.queryByTestId("secret-once")).not.toBeInTheDocument();
    expect(screen.queryByText(/whsec_c2VjcmV0/)).not.toBeInTheDocument();
  });
});
