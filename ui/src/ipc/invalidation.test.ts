import { QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { commandInvalidates, eventInvalidates, invalidate, type KeySet } from "./invalidation";
import { dlqKeys, gitopsKeys, healthKeys, keys, scope } from "./keys";

/** A client holding one query under each key, and which of them a set made stale. */
async function staleAfter(set: KeySet, seeded: readonly (readonly unknown[])[]) {
  const client = new QueryClient();
  for (const key of seeded) client.setQueryData(key, 1);
  await invalidate(client, set);
  return seeded.filter((key) => client.getQueryState(key)?.isInvalidated);
}

const noFilter = {
  endpoint: null,
  target: null,
  flow: null,
  error_class: null,
  since: null,
  until: null,
};
const acme = scope("acme");
const other = scope("other");
const everything = [
  acme.resources("endpoint"),
  acme.resources("target"),
  acme.resource("endpoint", "orders"),
  acme.history("endpoint", "orders"),
  acme.overview,
  acme.health,
  dlqKeys("acme").page(noFilter),
  dlqKeys("acme").writes,
  gitopsKeys("acme").sources,
  other.resources("endpoint"),
  other.overview,
  keys.outbox,
  keys.sync,
  keys.audit,
  keys.profiles,
  keys.conflict(3),
];

describe("the invalidation table", () => {
  it("a resource write makes that profile's resources, overview and the outbox stale, no other profile's", async () => {
    expect(await staleAfter(commandInvalidates.queue_write("acme"), everything)).toEqual([
      acme.resources("endpoint"),
      acme.resources("target"),
      acme.resource("endpoint", "orders"),
      acme.history("endpoint", "orders"),
      acme.overview,
      keys.outbox,
      keys.sync,
      keys.audit,
      keys.profiles,
    ]);
  });

  it("a write of an unknown profile (an outbox row of any) makes every profile's state stale", async () => {
    const stale = await staleAfter(commandInvalidates.resolve(undefined), everything);
    expect(stale).toContainEqual(other.resources("endpoint"));
    expect(stale).toContainEqual(acme.overview);
  });

  it("an operation event refreshes its resource, its kind's list and the conflicts", async () => {
    const event = { profile: "acme", kind: "endpoint" as const, name: "orders" };
    expect(await staleAfter(eventInvalidates.operation(event), everything)).toEqual([
      acme.resources("endpoint"),
      acme.resource("endpoint", "orders"),
      acme.history("endpoint", "orders"),
      acme.overview,
      keys.outbox,
      keys.audit,
      keys.profiles,
      keys.conflict(3),
    ]);
  });

  it("a replay write refreshes the write badges and sessions, not the DLQ's pages", async () => {
    const k = dlqKeys("acme");
    const seeded = [k.writes, k.replays, k.replay("rpl_1"), k.replay("rpl_2"), k.page(noFilter)];
    const event = { profile: "acme", session_id: "rpl_1" };
    // The sessions list is a prefix of each session's key: both sessions go stale with it.
    expect(await staleAfter(eventInvalidates.replay_write(event), seeded)).toEqual([
      k.writes,
      k.replays,
      k.replay("rpl_1"),
      k.replay("rpl_2"),
    ]);
  });

  it("the health figures refresh only when the profile went on- or offline", async () => {
    const seeded = [acme.health, acme.overview];
    expect(await staleAfter(eventInvalidates.sync("acme", false), seeded)).toEqual([acme.overview]);
    expect(await staleAfter(eventInvalidates.sync("acme", true), seeded)).toEqual(seeded);
  });

  it("every command's set names only the profile it ran for", () => {
    for (const [command, set] of Object.entries(commandInvalidates)) {
      const keysOf = (set as (...args: unknown[]) => KeySet)("acme", "crm");
      for (const key of keysOf)
        if (key[0] === "p") expect([command, key[1]]).toEqual([command, "acme"]);
    }
  });
});

describe("a refreshed local copy", () => {
  it("asks the profile's DLQ counts and delivery health again, not the DLQ's rows, no other profile's", async () => {
    const seeded = [
      dlqKeys("acme").stats("error_class", null),
      dlqKeys("acme").stats("hour", null),
      dlqKeys("acme").page(noFilter),
      healthKeys("acme").deliveries("1h", "target"),
      dlqKeys("other").stats("error_class", null),
      acme.overview,
    ];
    const set = eventInvalidates.resources_changed({ profile: "acme" });
    expect(await staleAfter(set, seeded)).toEqual([
      dlqKeys("acme").stats("error_class", null),
      dlqKeys("acme").stats("hour", null),
      healthKeys("acme").deliveries("1h", "target"),
      acme.overview,
    ]);
  });
});
