import { QueryClient } from "@tanstack/react-query";
import { afterEach, describe, expect, it, vi } from "vitest";

const show = vi.fn();
vi.mock("@mantine/notifications", () => ({ notifications: { show } }));

const { applyCoreEvent } = await import("./events");

describe("the quitting event", () => {
  afterEach(() => show.mockReset());

  it("says how many writes the window waits for, and that the rest stay queued", () => {
    applyCoreEvent(new QueryClient(), { type: "quitting", sending: 3 });
    expect(show).toHaveBeenCalledTimes(1);
    const shown = show.mock.calls[0][0];
    expect(shown.message).toContain("Finishing 3 writes already sent");
    expect(shown.message).toContain("stays queued for the next launch");
    expect(shown.autoClose).toBe(false);
    expect(shown.loading).toBe(true);
  });

  it("says one write in the singular", () => {
    applyCoreEvent(new QueryClient(), { type: "quitting", sending: 1 });
    expect(show.mock.calls[0][0].message).toContain("Finishing 1 write already sent");
  });
});
