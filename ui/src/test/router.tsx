// Renders a route of the app's router (`ui/src/router.tsx`) without the app's frame: the page
// the path names, with its search params validated as in the app. The URL is the window's
// hash, so a test can read what the page writes there.
import { RouterProvider } from "@tanstack/react-router";
import type { ProfileView } from "../ipc/bindings";
import { createAppRouter } from "../router";
import { renderUi, sandboxProfile } from "./render";

/** Renders the page at `path` (e.g. "/dlq?target=crm") once the route has resolved. */
export async function renderAt(path: string, profiles: ProfileView[] = [sandboxProfile()]) {
  window.history.replaceState(null, "", `#${path}`);
  const router = createAppRouter();
  await router.load();
  return { ...renderUi(<RouterProvider router={router} />, profiles), router };
}
