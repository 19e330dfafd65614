// A line diff of two JSON documents (pretty-printed with sorted keys), for "diff against live"
// and the three-way conflict view.
import type { JsonValue } from "../ipc/bindings";

export type DiffLine = { op: "same" | "add" | "del"; text: string };

/** Pretty JSON with object keys sorted, so key order never shows up as a change. */
export function pretty(value: JsonValue | null | undefined): string {
  if (value === undefined || value === null) return "";
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key] as JsonValue);
    return out;
  }
  return value;
}

/** A line without the comma JSON puts after every member but the last: adding a member after
 * `"a": 1` turns it into `"a": 1,`, which is no change to `a`. */
const bare = (line: string) => (line.endsWith(",") ? line.slice(0, -1) : line);

/** Longest-common-subsequence line diff, blind to the trailing comma; fine for specs (a few
 * hundred lines at most). A line the same in both is shown as it reads in `after`. */
export function diffLines(before: string, after: string): DiffLine[] {
  const shownB = after === "" ? [] : after.split("\n");
  const a = (before === "" ? [] : before.split("\n")).map(bare);
  const shownA = before === "" ? [] : before.split("\n");
  const b = shownB.map(bare);
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: "same", text: shownB[j] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ op: "del", text: shownA[i++] });
    } else {
      out.push({ op: "add", text: shownB[j++] });
    }
  }
  while (i < n) out.push({ op: "del", text: shownA[i++] });
  while (j < m) out.push({ op: "add", text: shownB[j++] });
  return out;
}

export function hasChanges(lines: DiffLine[]): boolean {
  return lines.some((line) => line.op !== "same");
}

/** The JSON merge patch (RFC 7396) that turns `before` into `after`. */
export function mergePatch(before: JsonValue, after: JsonValue): JsonValue {
  const isObj = (v: JsonValue): v is { [key: string]: JsonValue } =>
    !!v && typeof v === "object" && !Array.isArray(v);
  if (!isObj(before) || !isObj(after)) return after;
  const patch: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(before)) {
    if (!(key in after)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (old === undefined) patch[key] = value;
    else if (JSON.stringify(sortKeysPublic(old)) !== JSON.stringify(sortKeysPublic(value))) {
      patch[key] = isObj(old) && isObj(value) ? mergePatch(old, value) : value;
    }
  }
  return patch;
}

function sortKeysPublic(value: JsonValue): string {
  return pretty(value);
}
