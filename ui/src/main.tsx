import "@mantine/core/styles.css";
import "@mantine/notifications/styles.css";
import "@mantine/spotlight/styles.css";
import "@mantine/charts/styles.css";
import "./app.css";
import { localStorageColorSchemeManager, MantineProvider } from "@mantine/core";
import { Notifications } from "@mantine/notifications";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { markScript } from "./lib/launchMarks";
import { theme } from "./theme";

markScript();

const queryClient = new QueryClient({
  defaultOptions: {
    // Local IPC is cheap and the core pushes events: refetch on demand, not on focus.
    queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 2_000 },
  },
});

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
// Launch timing (the bench reads this mark through the log): the first paint with data.
performance.mark("switchyard-mounted");
