import { QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { mockCommands, onlineStatus, overviewOf, sandboxProfile } from "../test/render";
import { keys, prefetchFirstScreen, scope } from "./queries";

const client = () => new QueryClient({ defaultOptions: { queries: { retry: false } } });

describe("prefetchFirstScreen", () => {
  it("fills the profile list, the sync state and the active profile's overview", async () => {
    const calls = mockCommands({
      list_profiles: () => [
        sandboxProfile({ active: false }),
        sandboxProfile({ name: "prod", sandbox: false, active: true }),
      ],
      sync_status: () => onlineStatus(),
      overview: () => overviewOf({ endpoints: 7 }),
    });
    const c = client();
    await prefetchFirstScreen(c);
    // Asked for the active profile, cached under its name: never under another's.
    expect(calls).toContainEqual(["overview", { profile: "prod" }]);
    expect(c.getQueryData(scope("prod").overview)).toMatchObject({ endpoints: 7 });
    expect(c.getQueryData(scope("sandbox").overview)).toBeUndefined();
    expect(c.getQueryData(keys.sync)).toBeDefined();
    expect(c.getQueryData(keys.profiles)).toHaveLength(2);
  });

  it("asks for no overview when no profile is active", async () => {
    const calls = mockCommands({
      list_profiles: () => [],
      sync_status: () => onlineStatus(),
    });
    const c = client();
    await prefetchFirstScreen(c);
    expect(calls.map(([cmd]) => cmd)).not.toContain("overview");
    expect(c.getQueryData(keys.profiles)).toEqual([]);
  });

  it("resolves when a command fails, leaving the error to the hooks", async () => {
    const calls = mockCommands({
      list_profiles: () => {
        throw { code: "internal", message: "database is locked", problem: null };
      },
      sync_status: () => onlineStatus(),
    });
    const c = client();
    await expect(prefetchFirstScreen(c)).resolves.toBeUndefined();
    expect(calls.map(([cmd]) => cmd)).not.toContain("overview");
    expect(c.getQueryState(keys.profiles)?.status).toBe("error");
  });
});
