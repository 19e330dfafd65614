// A resource's status as the control plane reports it, in labelled values instead of raw
// JSON: a target's signing secrets as a list (id, created, how long each still signs), a
// certificate's dates with the time left in the format the badges use (lib/format.ts).
import { List, Stack, Table, Text } from "@mantine/core";
import type { ReactNode } from "react";
import type { JsonValue, ResourceView } from "../ipc/bindings";
import { shortTime, timeLeft } from "../lib/format";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
/** Keys whose date is a deadline: shown with the time left. */
const DEADLINES = new Set(["not_after", "ends_at", "expires_at"]);

const words = (key: string) => key.replaceAll("_", " ");
type Obj = { [key: string]: JsonValue };
const isObj = (v: JsonValue | undefined): v is Obj =>
  !!v && typeof v === "object" && !Array.isArray(v);

function date(key: string, iso: string, now: number): string {
  const ms = Date.parse(iso);
  return DEADLINES.has(key) ? `${shortTime(ms)} (${timeLeft(ms, now)})` : shortTime(ms);
}

function scalar(key: string, v: JsonValue, now: number): string {
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (v === null) return "—";
  if (typeof v === "string" && ISO.test(v)) return date(key, v, now);
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** One signing secret: "whsec_… · created Dec 7, 10:00 · signs until … (5 h left)". */
function secretLine(s: Obj, now: number): string {
  const created = typeof s.created_at === "string" ? `created ${date("", s.created_at, now)}` : "";
  const until =
    typeof s.expires_at === "string"
      ? `signs until ${date("expires_at", s.expires_at, now)}`
      : "signs with no expiry";
  return [String(s.id ?? "?"), created, until].filter(Boolean).join(" · ");
}

/** An object's members as "key: value" lines (one level; deeper values as they are). */
function members(o: Obj, now: number): string {
  return Object.entries(o)
    .map(([k, v]) => `${words(k)}: ${scalar(k, v, now)}`)
    .join(" · ");
}

function value(key: string, v: JsonValue, now: number): ReactNode {
  if (Array.isArray(v)) {
    if (v.length === 0) return "none";
    return (
      <List size="sm" spacing={2} data-testid={`status-list-${key}`}>
        {v.map((item, i) => (
          <List.Item key={isObj(item) && typeof item.id === "string" ? item.id : i}>
            {isObj(item)
              ? key === "signing_secrets"
                ? secretLine(item, now)
                : members(item, now)
              : scalar(key, item, now)}
          </List.Item>
        ))}
      </List>
    );
  }
  if (isObj(v)) {
    return (
      <Stack gap={0}>
        {Object.entries(v).map(([k, inner]) => (
          <Text size="sm" key={k}>
            {words(k)}: {scalar(k, inner, now)}
          </Text>
        ))}
      </Stack>
    );
  }
  return scalar(key, v, now);
}

export function StatusTable({
  status,
  now = Date.now(),
}: {
  status: ResourceView["status"];
  now?: number;
}) {
  const entries = isObj(status) ? Object.entries(status) : [];
  if (entries.length === 0)
    return (
      <Text size="sm" c="dimmed">
        The control plane reports no status for it.
      </Text>
    );
  return (
    <Table withRowBorders data-testid="status-table">
      <Table.Tbody>
        {entries.map(([key, v]) => (
          <Table.Tr key={key}>
            <Table.Td w={200} style={{ verticalAlign: "top" }}>
              <Text size="sm" c="dimmed">
                {words(key)}
              </Text>
            </Table.Td>
            <Table.Td>{value(key, v, now)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
