// Find an event by id and see every delivery it made.
import { Alert, Badge, Button, Group, Modal, Table, Text, TextInput } from "@mantine/core";
import { useState } from "react";
import { useEvent } from "../../ipc/dlqQueries";

export function EventLookup({ onDelivery }: { onDelivery: (id: string) => void }) {
  const [text, setText] = useState("");
  const [id, setId] = useState<string | null>(null);
  const event = useEvent(id);
  return (
    <>
      <Group gap="xs" wrap="nowrap">
        <TextInput
          placeholder="Event id (evt_…)"
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && text.trim() && setId(text.trim())}
          data-testid="event-lookup"
        />
        <Button variant="default" onClick={() => text.trim() && setId(text.trim())}>
          Find event
        </Button>
      </Group>
      <Modal opened={!!id} onClose={() => setId(null)} title={`Event ${id ?? ""}`} size="xl">
        {event.isError && <Alert color="red">{event.error.message}</Alert>}
        {event.data && (
          <>
            <Text mb="sm">
              {event.data.event_type} on {event.data.endpoint}
              {event.data.event_key ? ` (key ${event.data.event_key})` : ""},{" "}
              {new Date(event.data.created_at).toLocaleString()}
            </Text>
            <Table>
              <Table.Tbody>
                {event.data.deliveries.map((d) => (
                  <Table.Tr
                    key={d.id}
                    style={{ cursor: "pointer" }}
                    onClick={() => onDelivery(d.id)}
                  >
                    <Table.Td>{d.id}</Table.Td>
                    <Table.Td>
                      {d.flow} → {d.target}
                    </Table.Td>
                    <Table.Td>
                      <Badge>{d.state}</Badge>
                    </Table.Td>
                    <Table.Td>
                      {d.attempts_made}/{d.max_attempts}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </>
        )}
      </Modal>
    </>
  );
}
