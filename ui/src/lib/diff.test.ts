import { describe, expect, it } from "vitest";
import { diffLines, mergePatch, pretty } from "./diff";

describe("mergePatch", () => {
  it("sets changed fields, nulls removed ones, and recurses into objects", () => {
    expect(
      mergePatch(
        { url: "http://a", headers: { "X-A": "1", "X-B": "2" }, timeout_ms: 5 },
        { url: "http://b", headers: { "X-A": "1" }, timeout_ms: 5 },
      ),
    ).toEqual({ url: "http://b", headers: { "X-B": null } });
  });

  it("replaces arrays whole and leaves equal specs empty", () => {
    expect(mergePatch({ t: ["a"] }, { t: ["a", "b"] })).toEqual({ t: ["a", "b"] });
    expect(mergePatch({ b: 1, a: { y: 1, x: 2 } }, { a: { x: 2, y: 1 }, b: 1 })).toEqual({});
  });
});

describe("diffLines", () => {
  it("marks removed and added lines and ignores key order", () => {
    const lines = diffLines(pretty({ b: 1, a: 1 }), pretty({ a: 1, b: 2 }));
    expect(lines.filter((l) => l.op !== "same")).toEqual([
      { op: "del", text: '  "b": 1' },
      { op: "add", text: '  "b": 2' },
    ]);
  });

  // Adding a header after the last one put a comma on it, and the diff showed it as removed
  // and added again.
  it("shows only the added member, not the one that gained a comma", () => {
    const lines = diffLines(
      pretty({ headers: { "X-A": "1" } }),
      pretty({ headers: { "X-A": "1", "X-B": "2" } }),
    );
    expect(lines.filter((l) => l.op !== "same")).toEqual([{ op: "add", text: '    "X-B": "2"' }]);
    expect(lines.find((l) => l.text.includes("X-A"))?.text).toBe('    "X-A": "1",');
  });
});
