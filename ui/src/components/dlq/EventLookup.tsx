// Find an event by id (evt_…) or by its event key, and see every delivery it made: state,
// attempts, last answer, each linked to its timeline (a dead one is its DLQ entry).
import { Alert, Badge, Button, Group, Modal, Stack, Table, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import type { DeliveryView, EventView } from "../../ipc/bindings";
import { useEvent, useEventsByKey } from "../../ipc/dlqQueries";

/** An event id as the server mints them (`evt_` + letters/digits); anything else is a key. */
export const isEventId = (text: string) => /^evt_[0-9A-Za-z]+$/.test(text);

const stateColor: Record<string, string> = {
  succeeded: "green",
  dead: "red",
  pending: "yellow",
  in_flight: "blue",
  replayed: "grape",
  cancelled: "gray",
};

const lastAnswer = (d: DeliveryView) =>
  d.last_status_code != null ? `HTTP ${d.last_status_code}` : (d.error_class ?? "-");

function EventCard({ event, onDelivery }: { event: EventView; onDelivery: (id: string) => void }) {
  return (
    <Stack gap="xs" data-testid="found-event">
      <Text>
        <b>{event.id}</b> — {event.event_type} on {event.endpoint}
        {event.event_key ? ` (key ${event.event_key})` : ""},{" "}
        {new Date(event.created_at).toLocaleString()}
      </Text>
      {event.deliveries.length === 0 ? (
        <Text size="sm" c="dimmed">
          No deliveries: no enabled flow of the endpoint matched.
        </Text>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Delivery</Table.Th>
              <Table.Th>Flow → target</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Attempts</Table.Th>
              <Table.Th>Last answer</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {event.deliveries.map((d) => (
              <Table.Tr key={d.id} data-testid={`found-delivery-${d.id}`}>
                <Table.Td>
                  {d.id}
                  {d.replay_of ? (
                    <Text size="xs" c="dimmed">
                      replay of {d.replay_of}
                    </Text>
                  ) : null}
                </Table.Td>
                <Table.Td>
                  {d.flow} → {d.target}
                </Table.Td>
                <Table.Td style={{ whiteSpace: "nowrap" }}>
                  {/* Never cut: a narrow modal once showed "D…" for dead. */}
                  <Badge
                    color={stateColor[d.state] ?? "gray"}
                    data-testid="found-state"
                    styles={{ root: { overflow: "visible" }, label: { overflow: "visible" } }}
                  >
                    {d.state}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  {d.attempts_made}/{d.max_attempts}
                </Table.Td>
                <Table.Td>{lastAnswer(d)}</Table.Td>
                <Table.Td>
                  <Button size="compact-xs" variant="light" onClick={() => onDelivery(d.id)}>
                    {d.state === "dead" ? "DLQ entry" : "Timeline"}
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

type Lookup = { text: string; endpoint: string | null };

export function EventLookup({ onDelivery }: { onDelivery: (id: string) => void }) {
  const [text, setText] = useState("");
  const [endpoint, setEndpoint] = useState("");
  const [lookup, setLookup] = useState<Lookup | null>(null);
  const byId = lookup && isEventId(lookup.text) ? lookup.text : null;
  const byKey = lookup && !byId ? lookup.text : null;
  const event = useEvent(byId);
  const events = useEventsByKey(byKey, lookup?.endpoint ?? null);
  const find = () => {
    const t = text.trim();
    if (t) setLookup({ text: t, endpoint: endpoint.trim() || null });
  };
  const error = byId ? event.error : events.error;
  const found: EventView[] = byId ? (event.data ? [event.data] : []) : (events.data?.items ?? []);
  const loading = byId ? event.isLoading : events.isLoading;
  return (
    <>
      <Group gap="xs" wrap="nowrap">
        <TextInput
          w={200}
          placeholder="Event id (evt_…) or event key"
          aria-label="event id or key"
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && find()}
          data-testid="event-lookup"
        />
        <TextInput
          w={110}
          placeholder="endpoint"
          aria-label="lookup endpoint"
          value={endpoint}
          onChange={(e) => setEndpoint(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && find()}
          data-testid="event-lookup-endpoint"
        />
        <Button variant="default" onClick={find} data-testid="event-lookup-find">
          Find event
        </Button>
      </Group>
      <Modal
        opened={!!lookup}
        onClose={() => setLookup(null)}
        title={byId ? `Event ${byId}` : `Events with key ${byKey ?? ""}`}
        size="xl"
      >
        <Stack>
          {error && <Alert color="red">{error.message}</Alert>}
          {loading && <Text c="dimmed">Looking…</Text>}
          {!loading && !error && found.length === 0 && (
            <Text data-testid="found-nothing">
              No event with key {byKey}
              {lookup?.endpoint ? ` on ${lookup.endpoint}` : ""}.
            </Text>
          )}
          {found.map((e) => (
            <EventCard key={e.id} event={e} onDelivery={onDelivery} />
          ))}
          {events.data?.more && (
            <Text size="sm" c="dimmed">
              More events have this key: narrow by endpoint.
            </Text>
          )}
        </Stack>
      </Modal>
    </>
  );
}
