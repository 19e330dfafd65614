import { MantineProvider } from "@mantine/core";
import { Notifications } from "@mantine/notifications";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { mockIPC } from "@tauri-apps/api/mocks";
import { render } from "@testing-library/react";
import type { ReactNode } from "react";
import type {
  Commands,
  OutboxEntry,
  Overview,
  ProfileView,
  ResourceView,
  SyncStatus,
} from "../ipc/bindings";
import { keys } from "../ipc/queries";

type Handlers = { [K in keyof Commands]?: (args: Commands[K]["args"]) => Commands[K]["result"] };

/** Every IPC call the UI made, in order: [command, args]. */
export type CallLog = [string, unknown][];

/** The profile list when a test does not give one: the sandbox, active. */
export const sandboxProfile = (over: Partial<ProfileView> = {}): ProfileView => ({
  name: "sandbox",
  url: "http://127.0.0.1:1",
  sandbox: true,
  active: true,
  has_token: true,
  pending: 0,
  needs_attention: 0,
  ...over,
});

/**
 * Mocks the Rust side with typed handlers; an unhandled command rejects like a Rust error so a
 * test never passes on a call it did not expect. `list_profiles` defaults to the sandbox
 * alone (every profile-scoped query waits for the active profile).
 */
export function mockCommands(handlers: Handlers): CallLog {
  const calls: CallLog = [];
  const all: Handlers = { list_profiles: () => [sandboxProfile()], ...handlers };
  mockIPC(
    (cmd, payload) => {
      calls.push([cmd, payload]);
      const handler = all[cmd as keyof Commands] as ((args: unknown) => unknown) | undefined;
      if (!handler) {
        throw { code: "internal", message: `unexpected command ${cmd}`, problem: null };
      }
      return handler(payload);
    },
    { shouldMockEvents: true },
  );
  return calls;
}

/**
 * Renders with a fresh query client. The profile list starts as `profiles` (the sandbox,
 * active), as the app has it long before a person can click anything.
 */
export function renderUi(ui: ReactNode, profiles: ProfileView[] = [sandboxProfile()]) {
  const client = new QueryClient({
    defaultOptions: { queries: { retry: false }, mutations: { retry: false } },
  });
  client.setQueryData(keys.profiles, profiles);
  // Seeded, not fetched again on mount (a switch invalidates it, which does fetch).
  client.setQueryDefaults(keys.profiles, { staleTime: Number.POSITIVE_INFINITY });
  const rendered = render(
    <MantineProvider>
      <Notifications />
      <QueryClientProvider client={client}>{ui}</QueryClientProvider>
    </MantineProvider>,
  );
  return { ...rendered, client };
}

export function resource(over: Partial<ResourceView> = {}): ResourceView {
  return {
    kind: "endpoint",
    name: "orders",
    version: 1,
    updated_at: Date.now() - 60_000,
    spec: { description: "Orders", event_types: ["order.created"] },
    status: { enabled: true, pending_deliveries: 0 },
    pending: null,
    ...over,
  };
}

export function outboxEntry(over: Partial<OutboxEntry> = {}): OutboxEntry {
  return {
    id: 1,
    profile: "sandbox",
    kind: "endpoint",
    name: "orders",
    operation: "create",
    state: "pending",
    idempotency_key: "6f1c0d2e-0000-4000-8000-000000000001",
    body: { name: "orders", spec: {} },
    base_version: null,
    attempts: 0,
    created_at: Date.now() - 5_000,
    updated_at: Date.now() - 5_000,
    next_attempt_at: null,
    error: null,
    origin: { via: "console" },
    ...over,
  };
}

/**
 * A command's answer that never comes: a control plane that accepts the connection and never
 * answers (the UI must say it waits, never "empty").
 */
export function unanswered<T>(): T {
  return new Promise<never>(() => {}) as T;
}

/** The sandbox online, nothing queued: what the status bar and the launch wait for. */
export const onlineStatus = (over: Partial<SyncStatus> = {}): SyncStatus => ({
  profile: "sandbox",
  online: true,
  last_sync_at: Date.now(),
  pending: 0,
  needs_attention: 0,
  syncing: false,
  round_done: 0,
  round_total: 0,
  offline_reason: null,
  ...over,
});

/** The overview's counts for the sandbox, nothing queued, no recent activity. */
export const overviewOf = (over: Partial<Overview> = {}): Overview => ({
  profile: "sandbox",
  endpoints: 3,
  targets: 1,
  flows: 1,
  disabled_endpoints: 0,
  refreshed_at: 1_700_000_000_000,
  pending: 0,
  needs_attention: 0,
  recent: [],
  ...over,
});
