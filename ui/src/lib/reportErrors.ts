// Query failures that happen in the UI itself, or that the core calls internal (an error the
// core answered with another code, offline say, is its to log) go to the app's log, once a minute each at
// most, so a person reading the log afterwards sees them too.
import { call } from "../ipc/client";

const REPEAT_AFTER_MS = 60_000;
const said = new Map<string, number>();

/** Whether `error` is one the core answered and says what it is (not an internal failure). */
const fromCore = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  "code" in error &&
  (error as { code: unknown }).code !== "internal";

/** Logs `error` of the query keyed `key` unless it came from the core or was said lately. */
export function reportUiError(error: unknown, key: readonly unknown[], now = Date.now()): boolean {
  if (fromCore(error)) return false;
  const why =
    error instanceof Error
      ? error.message
      : typeof error === "object" && error !== null && "message" in error
        ? String((error as { message: unknown }).message)
        : String(error);
  const message = `query ${JSON.stringify(key)} failed: ${why}`;
  const last = said.get(message);
  if (last !== undefined && now - last < REPEAT_AFTER_MS) return false;
  said.set(message, now);
  void call("report_ui_error", { message }).catch(() => {});
  return true;
}
