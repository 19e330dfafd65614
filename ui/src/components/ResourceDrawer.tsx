import { Alert, Button, Drawer, Group, List, Modal, Stack, Table, Tabs, Text } from "@mantine/core";
import { useState } from "react";
import type { Kind, ResourceView } from "../ipc/bindings";
import { useDependants, useHistory, useQueueWrite, useResource } from "../ipc/queries";
import { kindLabels, operationLabels, shortTime } from "../lib/format";
import { enabled } from "../lib/kinds";
import { ApplyEditor } from "./ApplyEditor";
import { AttentionActions } from "./AttentionActions";
import { ErrorAlert } from "./ErrorAlert";
import { JsonBlock } from "./JsonDiff";
import { PendingBadge, StateBadge } from "./PendingBadge";
import { ResourceForm } from "./ResourceForm";

type Mode = "view" | "edit" | "apply";

export function ResourceDrawer({
  kind,
  name,
  onClose,
}: {
  kind: Kind;
  name: string | null;
  onClose: () => void;
}) {
  const resource = useResource(kind, name);
  const [mode, setMode] = useState<Mode>("view");
  const close = () => {
    setMode("view");
    onClose();
  };
  return (
    <Drawer
      opened={!!name}
      onClose={close}
      position="right"
      size="xl"
      transitionProps={{ duration: 120 }}
      title={
        <Group gap="sm">
          <Text fw={600}>
            {kindLabels[kind].one} {name}
          </Text>
          {resource.data && <PendingBadge pending={resource.data.pending} />}
        </Group>
      }
      data-testid="resource-drawer"
    >
      {resource.isError && <ErrorAlert error={resource.error as never} />}
      {resource.data && mode === "view" && (
        <Details resource={resource.data} onMode={setMode} onDeleted={close} />
      )}
      {resource.data && mode === "edit" && (
        <ResourceForm kind={kind} resource={resource.data} onDone={() => setMode("view")} />
      )}
      {resource.data && mode === "apply" && (
        <ApplyEditor kind={kind} resource={resource.data} onDone={() => setMode("view")} />
      )}
    </Drawer>
  );
}

function Details({
  resource,
  onMode,
  onDeleted,
}: {
  resource: ResourceView;
  onMode: (mode: Mode) => void;
  onDeleted: () => void;
}) {
  const queue = useQueueWrite();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const history = useHistory(resource.kind, resource.name);
  const on = enabled(resource);
  const write = (operation: "enable" | "disable") =>
    queue.mutate({
      kind: resource.kind,
      name: resource.name,
      operation,
      spec: null,
      base_version: null,
    });
  const pending = resource.pending;
  return (
    <Stack gap="md">
      {pending && pending.state === "needs_attention" && (
        <Alert color="red" title="This change needs attention">
          <Stack gap="xs">
            <Text size="sm">{pending.error?.message}</Text>
            <AttentionActions id={pending.op_id} state={pending.state} error={pending.error} />
          </Stack>
        </Alert>
      )}
      <Group gap="xs">
        <Button size="xs" onClick={() => onMode("edit")} data-testid="edit">
          Edit
        </Button>
        <Button size="xs" variant="light" onClick={() => onMode("apply")} data-testid="apply">
          Apply JSON
        </Button>
        {on !== null && (
          <Button
            size="xs"
            variant="light"
            color={on ? "gray" : "green"}
            onClick={() => write(on ? "disable" : "enable")}
            data-testid="toggle-enabled"
          >
            {on ? "Disable" : "Enable"}
          </Button>
        )}
        <Button
          size="xs"
          variant="light"
          color="red"
          onClick={() => setConfirmDelete(true)}
          data-testid="delete"
        >
          Delete
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        Version {resource.version || "— (not yet on the control plane)"} · updated{" "}
        {shortTime(resource.updated_at)}
      </Text>
      <Tabs defaultValue="spec">
        <Tabs.List>
          <Tabs.Tab value="spec">Spec</Tabs.Tab>
          <Tabs.Tab value="status">Status</Tabs.Tab>
          <Tabs.Tab value="history" data-testid="tab-history">
            History
          </Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="spec" pt="sm">
          <JsonBlock value={resource.spec} height={380} />
        </Tabs.Panel>
        <Tabs.Panel value="status" pt="sm">
          <JsonBlock value={resource.status} height={380} />
        </Tabs.Panel>
        <Tabs.Panel value="history" pt="sm">
          <Table striped data-testid="history">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Change</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(history.data ?? []).map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td>{shortTime(entry.created_at)}</Table.Td>
                  <Table.Td>{operationLabels[entry.operation]}</Table.Td>
                  <Table.Td>
                    <StateBadge state={entry.state} />
                  </Table.Td>
                  <Table.Td>
                    <AttentionActions id={entry.id} state={entry.state} error={entry.error} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {history.data?.length === 0 && (
            <Text size="sm" c="dimmed">
              No changes made from this console.
            </Text>
          )}
        </Tabs.Panel>
      </Tabs>
      <DeleteConfirm
        resource={resource}
        opened={confirmDelete}
        onClose={() => setConfirmDelete(false)}
        onDeleted={onDeleted}
      />
    </Stack>
  );
}

/** Delete, after naming what depends on the resource. */
export function DeleteConfirm({
  resource,
  opened,
  onClose,
  onDeleted,
}: {
  resource: ResourceView;
  opened: boolean;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const dependants = useDependants(resource.kind, resource.name, opened);
  const queue = useQueueWrite();
  const users = dependants.data ?? [];
  const remove = async () => {
    await queue.mutateAsync({
      kind: resource.kind,
      name: resource.name,
      operation: "delete",
      spec: null,
      base_version: resource.version || null,
    });
    onClose();
    onDeleted();
  };
  return (
    <Modal opened={opened} onClose={onClose} title={`Delete ${resource.kind} ${resource.name}?`}>
      <Stack gap="sm" data-testid="delete-confirm">
        {users.length > 0 ? (
          <Alert color="orange" title={`${users.length} flow(s) use it`}>
            <Text size="sm">The control plane refuses the delete while these exist:</Text>
            <List size="sm">
              {users.map((user) => (
                <List.Item key={user}>{user}</List.Item>
              ))}
            </List>
          </Alert>
        ) : (
          <Text size="sm">
            Nothing depends on it. The delete is queued and sent to the control plane.
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button
            color="red"
            onClick={remove}
            loading={queue.isPending}
            data-testid="confirm-delete"
          >
            Delete
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
