import { describe, expect, it } from "vitest";
import { mockCommands } from "../test/render";
import { reportUiError } from "./reportErrors";

describe("reportUiError", () => {
  it("logs the UI's own query failures once a minute each, and leaves the core's to the core", () => {
    const calls = mockCommands({ report_ui_error: () => null });
    const missing = new Error('Missing queryFn: \'["p","hung-cp","dlq"]\'');
    expect(reportUiError(missing, ["p", "hung-cp", "dlq"], 1_000)).toBe(true);
    expect(reportUiError(missing, ["p", "hung-cp", "dlq"], 30_000)).toBe(false);
    expect(reportUiError(missing, ["p", "hung-cp", "dlq"], 62_000)).toBe(true);
    const offline = { code: "offline", message: "cannot reach hung-cp", problem: null };
    expect(reportUiError(offline, ["p", "hung-cp", "overview"], 1_000)).toBe(false);
    const internal = { code: "internal", message: "bad argument", problem: null };
    expect(reportUiError(internal, ["p", "hung-cp", "overview"], 1_000)).toBe(true);
    const sent = calls.filter(([c]) => c === "report_ui_error").map(([, a]) => a);
    expect(sent).toEqual([
      { message: `query ["p","hung-cp","dlq"] failed: ${missing.message}` },
      { message: `query ["p","hung-cp","dlq"] failed: ${missing.message}` },
      { message: 'query ["p","hung-cp","overview"] failed: bad argument' },
    ]);
  });
});
