import { describe, expect, it } from "vitest";
import { assignSlots } from "./rowSlots";

const ids = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `d${from + i}`);

describe("assignSlots", () => {
  it("keeps the slot of a row still shown and gives departed rows' slots to new ones", () => {
    const first = assignSlots(new Map(), ids(0, 10));
    expect([...first.values()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const next = assignSlots(first, ids(3, 13));
    for (const id of ids(3, 10)) expect(next.get(id)).toBe(first.get(id));
    // d10..d12 took the slots d0..d2 left: still ten slots.
    expect(new Set(next.values())).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  });

  it("never gives two rows shown together one slot, and never needs more slots than rows", () => {
    let slots = new Map<string, number>();
    let top = 0;
    let most = 0;
    // A scroll down and back up with a view whose size changes (overscan filling in).
    for (let step = 0; step < 400; step++) {
      top = Math.max(0, top + (step < 250 ? 3 : -5));
      const shown = ids(top, top + 30 + (step % 7));
      most = Math.max(most, shown.length);
      slots = assignSlots(slots, shown);
      expect(new Set(shown.map((id) => slots.get(id))).size).toBe(shown.length);
      expect(Math.max(...slots.values())).toBeLessThan(most);
    }
  });

  it("a row listed twice (a delivery kept in two pages) does not take two slots", () => {
    const slots = assignSlots(new Map(), ["a", "b", "a"]);
    expect(slots.size).toBe(2);
  });
});
