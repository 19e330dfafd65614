import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { renderUi } from "../test/render";
import { PendingBadge, StateBadge } from "./PendingBadge";

describe("pending-state badges", () => {
  it.each([
    ["pending", "Saved locally"],
    ["sending", "Sending"],
    ["done", "Confirmed"],
    ["needs_attention", "Needs attention"],
  ] as const)("a %s write reads %s", (state, label) => {
    renderUi(<StateBadge state={state} />);
    expect(screen.getByTestId("op-state")).toHaveTextContent(label);
    expect(screen.getByTestId("op-state")).toHaveAttribute("data-state", state);
  });

  it("names the operation next to a resource", () => {
    renderUi(
      <PendingBadge pending={{ op_id: 3, operation: "update", state: "pending", error: null }} />,
    );
    expect(screen.getByTestId("pending-badge")).toHaveTextContent("Saved locally · edit");
  });

  it("shows nothing when no write is on the resource", () => {
    renderUi(<PendingBadge pending={null} />);
    expect(screen.queryByTestId("pending-badge")).toBeNull();
  });
});
