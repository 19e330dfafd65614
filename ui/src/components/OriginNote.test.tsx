import { fireEvent, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { OutboxPage } from "../pages/OutboxPage";
import { mockCommands, outboxEntry, renderUi } from "../test/render";

describe("OriginNote", () => {
  it("marks an agent's queued write in the outbox, where the operator can discard it", async () => {
    const byAgent = outboxEntry({
      id: 5,
      origin: { via: "mcp", client: "claude-desktop 1.2" },
    });
    const byHand = outboxEntry({ id: 6, name: "billing" });
    const calls = mockCommands({
      list_outbox: () => [byAgent, byHand],
      resolve: () => null,
    });
    renderUi(<OutboxPage />);
    const row = await screen.findByTestId("outbox-5");
    expect(within(row).getByTestId("origin-note")).toHaveTextContent("via MCP: claude-desktop 1.2");
    expect(within(screen.getByTestId("outbox-6")).queryByTestId("origin-note")).toBeNull();
    fireEvent.click(within(row).getByTestId("discard"));
    await screen.findByTestId("outbox-5");
    expect(calls).toContainEqual(["resolve", { id: 5, resolution: "discard" }]);
  });
});
