// What the app's frame (App.tsx) keeps across pages and hands to the routes' pages: the
// replay picked, the DLQ rows ticked, the resource to open on arrival. Routes rendered without
// the frame (the pages' tests) get a stand-in that only navigates.
import { useNavigate } from "@tanstack/react-router";
import { createContext, type RefObject, useContext, useMemo, useRef, useState } from "react";
import type { ResourceKind } from "./ipc/bindings";
import { storedDlqSearch } from "./lib/dlq";
import { type Page, pagePath } from "./nav";
import type { DlqSelection } from "./pages/DlqPage";
import type { ResourcesPageHandle } from "./pages/ResourcesPage";

export type Shell = {
  /** Shows `page`; on a resources page, `open` is the resource whose drawer opens. */
  go: (page: Page, open?: string | null) => void;
  /** Shows the DLQ filtered to `target`. */
  openDlqFor: (target: string) => void;
  openOnArrival: string | null;
  resourcesRef: RefObject<ResourcesPageHandle | null>;
  /** The DLQ rows ticked, kept while other pages show (undefined: the page keeps its own). */
  dlqSelection?: DlqSelection;
  replay: string | null;
  setReplay: (id: string | null) => void;
  /** Whether the `kind` page, just mounted, opens its create form (and forgets it). */
  takeCreate?: (kind: ResourceKind) => boolean;
};

export const ShellContext = createContext<Shell | null>(null);

/** Navigation to a page: the DLQ opens on the view it was last left with (localStorage). */
export function usePageNavigation() {
  const navigate = useNavigate();
  return useMemo(
    () => ({
      toPage: (page: Page) =>
        page === "dlq"
          ? navigate({ to: "/dlq", search: storedDlqSearch() })
          : navigate({ to: pagePath[page] }),
      toDlq: (target: string) => navigate({ to: "/dlq", search: { target } }),
    }),
    [navigate],
  );
}

export function useShell(): Shell {
  const shell = useContext(ShellContext);
  const nav = usePageNavigation();
  const [replay, setReplay] = useState<string | null>(null);
  const resourcesRef = useRef<ResourcesPageHandle>(null);
  return (
    shell ?? {
      go: (page) => nav.toPage(page),
      openDlqFor: nav.toDlq,
      openOnArrival: null,
      resourcesRef,
      replay,
      setReplay,
    }
  );
}
