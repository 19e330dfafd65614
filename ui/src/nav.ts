// The pages and their routes' paths (`ui/src/router.tsx`). A page's path is its id, but the
// overview, where the app opens, is the root.
export type Page =
  | "overview"
  | "endpoint"
  | "target"
  | "flow"
  | "outbox"
  | "activity"
  | "dlq"
  | "replays"
  | "gitops"
  | "recovery";

export const pagePath = {
  overview: "/",
  endpoint: "/endpoint",
  target: "/target",
  flow: "/flow",
  outbox: "/outbox",
  activity: "/activity",
  dlq: "/dlq",
  replays: "/replays",
  gitops: "/gitops",
  recovery: "/recovery",
} as const satisfies Record<Page, string>;

export type PagePath = (typeof pagePath)[Page];

/** The page a route path shows (an unknown path shows the overview, as the router does). */
export function pageOf(pathname: string): Page {
  const found = (Object.keys(pagePath) as Page[]).find((p) => pagePath[p] === pathname);
  return found ?? "overview";
}
