// The webview's side of the launch (docs/desktop.md, `make bench-desktop`): when the script
// ran, when the first render was committed, when the first command answer arrived, and when
// the frame showing the first screen's data was painted, in ms since the page started
// loading. Sent once with `ui_ready`, which logs them beside the app's own phases, so a slow
// launch says where its time went.
import type { LaunchMarks } from "../ipc/bindings";

const marks: Partial<LaunchMarks> = {};

const now = () => performance.now();

/** The UI's script runs (main.tsx, after its imports were evaluated). */
export function markScript(at = now()) {
  marks.script_ms ??= at;
}

/** The first render is on screen. */
export function markFirstRender(at = now()) {
  marks.first_render_ms ??= at;
}

/** A command answered (only the first one counts). */
export function markAnswer(at = now()) {
  marks.first_answer_ms ??= at;
}

/** Every mark, with the first screen's data shown now (`at`). */
export function launchMarks(at = now()): LaunchMarks {
  return {
    script_ms: marks.script_ms ?? 0,
    first_render_ms: marks.first_render_ms ?? at,
    first_answer_ms: marks.first_answer_ms ?? null,
    shown_ms: at,
  };
}
