// The health window picked last (15 m, 1 h, 24 h, 7 d), remembered across launches and shared
// by every view of delivery health: the Overview, a drawer's Health tab and the resource
// tables' sparklines read and set the same one, so they ask for the same figures.
import { useCallback, useSyncExternalStore } from "react";
import type { MetricsWindow } from "../ipc/bindings";
import { isWindow } from "./health";

/** The Overview's storage key, kept so a window picked before this module existed survives. */
export const WINDOW_KEY = "overview-window";

const listeners = new Set<() => void>();

function read(): MetricsWindow {
  const saved = localStorage.getItem(WINDOW_KEY);
  return isWindow(saved) ? saved : "1h";
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** The remembered window and a setter that stores it and tells every view using it. */
export function useHealthWindow(): [MetricsWindow, (value: string) => void] {
  const window = useSyncExternalStore(subscribe, read, read);
  const pick = useCallback((value: string) => {
    if (!isWindow(value)) return;
    localStorage.setItem(WINDOW_KEY, value);
    for (const l of listeners) l();
  }, []);
  return [window, pick];
}
