import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, outboxEntry, renderUi, sandboxProfile } from "../test/render";
import { ProfileSwitcher } from "./ProfileSwitcher";

const profiles = () => [
  sandboxProfile(),
  sandboxProfile({ name: "offline-cp", sandbox: false, active: false, pending: 2 }),
];

describe("ProfileSwitcher", () => {
  it("shows each control plane's unsent writes next to it", async () => {
    mockCommands({
      check_health: () => ({ ok: true, latency_ms: 1, server_version: "0.1.0", error: null }),
    });
    renderUi(<ProfileSwitcher />, profiles());
    fireEvent.click(screen.getByTestId("profile-switcher"));
    expect(await screen.findByTestId("pending-offline-cp")).toHaveTextContent("2 pending");
    expect(screen.queryByTestId("pending-sandbox")).toBeNull();
  });

  it("removing a control plane names the unsent changes lost, with the menu closed", async () => {
    const calls = mockCommands({
      check_health: () => ({ ok: true, latency_ms: 1, server_version: "0.1.0", error: null }),
      list_outbox: () => [
        outboxEntry({ id: 1, profile: "offline-cp", name: "offline-ep", operation: "create" }),
        outboxEntry({ id: 2, profile: "offline-cp", name: "offline-ep", operation: "disable" }),
        outboxEntry({ id: 3, profile: "sandbox", name: "orders" }),
      ],
      remove_profile: () => null,
    });
    renderUi(<ProfileSwitcher />, profiles());
    fireEvent.click(screen.getByTestId("profile-switcher"));
    fireEvent.click(await screen.findByTestId("remove-offline-cp"));
    const dialog = await screen.findByTestId("remove-profile");
    // The menu is closed: it covered half of the dialog's Remove button.
    await waitFor(() => expect(screen.queryByTestId("profile-offline-cp")).toBeNull());
    await waitFor(() =>
      expect(within(dialog).getByTestId("remove-unsent")).toHaveTextContent(
        "2 unsent changes are lost",
      ),
    );
    expect(dialog).toHaveTextContent("create endpoint offline-ep");
    expect(dialog).toHaveTextContent("disable endpoint offline-ep");
    expect(dialog).not.toHaveTextContent("orders");
    fireEvent.click(within(dialog).getByTestId("confirm-remove-profile"));
    await waitFor(() =>
      expect(calls.filter(([c]) => c === "remove_profile")).toEqual([
        ["remove_profile", { name: "offline-cp" }],
      ]),
    );
  });
});
