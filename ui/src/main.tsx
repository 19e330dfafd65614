import "@mantine/core/styles.css";
import "@mantine/notifications/styles.css";
import "@mantine/spotlight/styles.css";
import "@mantine/charts/styles.css";
import "./app.css";
import { localStorageColorSchemeManager, MantineProvider } from "@mantine/core";
import { Notifications } from "@mantine/notifications";
import { QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { prefetchFirstScreen } from "./ipc/queries";
import { markScript } from "./lib/launchMarks";
import { reportUiError } from "./lib/reportErrors";
import { theme } from "./theme";

markScript();

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: (error, query) => reportUiError(error, query.queryKey) }),
  defaultOptions: {
    // Local IPC is cheap and the core pushes events: refetch on demand, not on focus.
    queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 2_000 },
  },
});

// The first screen's commands go out now. The first render waits for their answers (the
// local cache answers in tens of ms), at most FIRST_RENDER_WAITS_AT_MOST_MS: one render and
// one layout with the data, instead of a shell of placeholders whose style, layout and paint
// hold up the answers and then a second pass (docs/desktop.md, "Start-up order").
const FIRST_RENDER_WAITS_AT_MOST_MS = 250;
const firstScreen = prefetchFirstScreen(queryClient);
const waited = new Promise((resolve) => setTimeout(resolve, FIRST_RENDER_WAITS_AT_MOST_MS));

function render() {
  const root = document.getElementById("root");
  if (!root) throw new Error("index.html has no #root");
  createRoot(root).render(
    <StrictMode>
      <MantineProvider
        theme={theme}
        defaultColorScheme="auto"
        colorSchemeManager={localStorageColorSchemeManager({ key: "switchyard-color-scheme" })}
      >
        <Notifications position="bottom-right" />
        <QueryClientProvider client={queryClient}>
          <App />
        </QueryClientProvider>
      </MantineProvider>
    </StrictMode>,
  );
}

void Promise.race([firstScreen, waited]).then(render);
