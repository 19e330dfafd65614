import { skipToken } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { keys, scoped } from "./queries";

describe("scoped queries", () => {
  it("wait with skipToken, keyed by what they have, while an input is missing", () => {
    const fetch = () => Promise.resolve(1);
    const overview = scoped(undefined, (s) => s.overview, fetch);
    const health = scoped(undefined, (s) => s.health, fetch);
    expect(overview.queryFn).toBe(skipToken);
    // Two queries waiting for the profile never share a cache entry.
    expect(overview.queryKey).toEqual(["p", null, "overview"]);
    expect(health.queryKey).not.toEqual(overview.queryKey);
    // A missing name is `null` in the key, not a name some resource could have.
    const resource = scoped("acme", (s) => s.resource("target", null), null);
    expect(resource.queryFn).toBe(skipToken);
    expect(resource.queryKey).toEqual(["p", "acme", "resource", "target", null]);
    expect(keys.conflict(null)).toEqual(["conflict", null]);
    expect(scoped("acme", (s) => s.overview, fetch).queryFn).not.toBe(skipToken);
  });
});
