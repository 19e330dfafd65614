// The pages as routes of a hash history: the app is served from tauri://localhost, where no
// server answers a path, so the route lives after the "#" (`#/target`, `#/dlq?target=crm`).
// The frame around the pages (App.tsx) is the router's InnerWrap, so it renders on the first
// paint, before the routes have resolved.
import {
  createHashHistory,
  createRootRoute,
  createRoute,
  createRouter,
  Navigate,
  type RouteComponent,
  type RouterHistory,
} from "@tanstack/react-router";
import { type JSX, type ReactNode, useEffect } from "react";
import type { Kind } from "./ipc/bindings";
import { searchToQuery, validateDlqSearch } from "./lib/dlq";
import { ActivityPage } from "./pages/ActivityPage";
import { DlqPage } from "./pages/DlqPage";
import { GitopsPage } from "./pages/GitopsPage";
import { OutboxPage } from "./pages/OutboxPage";
import { OverviewPage } from "./pages/OverviewPage";
import { RecoveryPage } from "./pages/RecoveryPage";
import { ReplaysPage } from "./pages/ReplaysPage";
import { ResourcesPage } from "./pages/ResourcesPage";
import { useShell } from "./shell";

function OverviewRoute() {
  const shell = useShell();
  return (
    <OverviewPage
      onOpenDlq={shell.openDlqFor}
      onOpenTarget={(name) => shell.go("target", name)}
      onOpenRecovery={() => shell.go("recovery")}
    />
  );
}

function ResourcesRoute({ kind }: { kind: Kind }) {
  const shell = useShell();
  // Runs once the page has mounted and its handle is set (a child's ref comes first).
  // biome-ignore lint/correctness/useExhaustiveDependencies: on arrival only
  useEffect(() => {
    if (shell.takeCreate?.(kind)) shell.resourcesRef.current?.create();
  }, []);
  return (
    <ResourcesPage
      key={kind}
      kind={kind}
      ref={shell.resourcesRef}
      initialOpen={shell.openOnArrival}
      onOpenDlq={shell.openDlqFor}
    />
  );
}

function DlqRoute() {
  const shell = useShell();
  return (
    <DlqPage
      selection={shell.dlqSelection}
      onReplayStarted={(id) => {
        shell.setReplay(id);
        shell.go("replays");
      }}
    />
  );
}

function ReplaysRoute() {
  const shell = useShell();
  return <ReplaysPage selected={shell.replay} onSelect={shell.setReplay} />;
}

const rootRoute = createRootRoute({
  // An unknown route (a mistyped link) shows the overview, as the app did before routes.
  notFoundComponent: () => <Navigate to="/" replace />,
});

const page = <P extends string>(path: P, component: RouteComponent) =>
  createRoute({ getParentRoute: () => rootRoute, path, component });

const dlqRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/dlq",
  // Typed, validated filter params: an unknown error class or a malformed time is dropped.
  validateSearch: validateDlqSearch,
  component: DlqRoute,
});

export const routeTree = rootRoute.addChildren([
  page("/", OverviewRoute),
  page("/endpoint", () => <ResourcesRoute kind="endpoint" />),
  page("/target", () => <ResourcesRoute kind="target" />),
  page("/flow", () => <ResourcesRoute kind="flow" />),
  page("/outbox", OutboxPage),
  page("/activity", ActivityPage),
  dlqRoute,
  page("/replays", ReplaysRoute),
  page("/gitops", GitopsPage),
  page("/recovery", RecoveryPage),
]);

/**
 * The app's router. Search params are plain `URLSearchParams` strings (not the router's JSON
 * encoding), so the DLQ's URL reads as it always did: `target=crm`, never `target=%22crm%22`.
 */
export function createAppRouter({
  history,
  frame,
}: {
  history?: RouterHistory;
  /** What wraps every page (the app's frame); none in the pages' tests. */
  frame?: (props: { children: ReactNode }) => JSX.Element;
} = {}) {
  // A link from before routes (`#dlq?target=crm`) opens the same view at its route.
  if (!history && window.location.hash.startsWith("#dlq?"))
    window.history.replaceState(null, "", `#/dlq?${window.location.hash.slice("#dlq?".length)}`);
  return createRouter({
    routeTree,
    history: history ?? createHashHistory(),
    InnerWrap: frame,
    parseSearch: (query) =>
      Object.fromEntries(new URLSearchParams(query.startsWith("?") ? query.slice(1) : query)),
    stringifySearch: (search) => {
      const query = searchToQuery(search);
      return query ? `?${query}` : "";
    },
  });
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
}
