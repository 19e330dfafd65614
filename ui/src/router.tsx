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
import { type JSX, lazy, type ReactNode, Suspense, useEffect } from "react";
import type { ResourceKind } from "./ipc/bindings";
import { searchToQuery, validateDlqSearch } from "./lib/dlq";
import { OverviewPage } from "./pages/OverviewPage";
import { ResourcesPage } from "./pages/ResourcesPage";
import { useShell } from "./shell";

// The first screen (the overview) and the resource pages are in the main bundle; the other
// pages load when first opened, so a launch parses only what the first screen needs (the
// app's launch time is mostly this script: `make bench-desktop`). The resource pages stay:
// "New endpoint" from the palette calls their handle as soon as they mount.
const ActivityPage = lazy(() =>
  import("./pages/ActivityPage").then((m) => ({ default: m.ActivityPage })),
);
const DlqPage = lazy(() => import("./pages/DlqPage").then((m) => ({ default: m.DlqPage })));
const GitopsPage = lazy(() =>
  import("./pages/GitopsPage").then((m) => ({ default: m.GitopsPage })),
);
const OutboxPage = lazy(() =>
  import("./pages/OutboxPage").then((m) => ({ default: m.OutboxPage })),
);
const RecoveryPage = lazy(() =>
  import("./pages/RecoveryPage").then((m) => ({ default: m.RecoveryPage })),
);
const ReplaysPage = lazy(() =>
  import("./pages/ReplaysPage").then((m) => ({ default: m.ReplaysPage })),
);

/** A page loaded on first use: nothing (the frame stays) until its script is in. */
const later = (Page: () => JSX.Element) => () => (
  <Suspense fallback={null}>
    <Page />
  </Suspense>
);

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

function ResourcesRoute({ kind }: { kind: ResourceKind }) {
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
    <Suspense fallback={null}>
      <DlqPage
        selection={shell.dlqSelection}
        onReplayStarted={(id) => {
          shell.setReplay(id);
          shell.go("replays");
        }}
      />
    </Suspense>
  );
}

function ReplaysRoute() {
  const shell = useShell();
  return (
    <Suspense fallback={null}>
      <ReplaysPage selected={shell.replay} onSelect={shell.setReplay} />
    </Suspense>
  );
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
  page(
    "/outbox",
    later(() => <OutboxPage />),
  ),
  page(
    "/activity",
    later(() => <ActivityPage />),
  ),
  dlqRoute,
  page("/replays", ReplaysRoute),
  page(
    "/gitops",
    later(() => <GitopsPage />),
  ),
  page(
    "/recovery",
    later(() => <RecoveryPage />),
  ),
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
