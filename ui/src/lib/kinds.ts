// What the UI knows about each kind: the summary column of the table and the starting spec.
import type { JsonValue, ResourceKind, ResourceView } from "../ipc/bindings";

type Obj = { [key: string]: JsonValue };
const obj = (value: JsonValue): Obj =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Obj) : {};
const str = (value: JsonValue | undefined): string => (typeof value === "string" ? value : "");
const list = (value: JsonValue | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

/** One line describing the resource, for the table and the palette. */
export function summary(resource: ResourceView): string {
  const spec = obj(resource.spec);
  switch (resource.kind) {
    case "endpoint": {
      const types = list(spec.event_types);
      return [str(spec.description), types.length ? types.join(", ") : "any event type"]
        .filter(Boolean)
        .join(" · ");
    }
    case "target":
      return str(spec.url);
    case "flow":
      return `${str(spec.endpoint)} → ${str(spec.target)} (${str(spec.mode) || "async_inline"})`;
  }
}

/** Enabled / disabled for endpoints; `null` for kinds without the notion. */
export function enabled(resource: ResourceView): boolean | null {
  if (resource.kind !== "endpoint") return null;
  const status = obj(resource.status);
  return typeof status.enabled === "boolean" ? status.enabled : true;
}

export const emptySpec: Record<ResourceKind, Obj> = {
  endpoint: { description: "", event_types: [] },
  target: { url: "https://", timeout_ms: 15000, headers: {} },
  flow: { endpoint: "", target: "", event_types: [], mode: "async_inline" },
};

export { list, obj, str };
