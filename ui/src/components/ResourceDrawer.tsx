import {
  Alert,
  Badge,
  Button,
  Drawer,
  Group,
  List,
  Modal,
  Stack,
  Table,
  Tabs,
  Text,
} from "@mantine/core";
import { useState } from "react";
import type { ResourceKind, ResourceView } from "../ipc/bindings";
import { useDependants, useHistory, useQueueWrite, useResource } from "../ipc/queries";
import { kindLabels, operationLabels, shortTime } from "../lib/format";
import { enabled } from "../lib/kinds";
import { useRoleRefusal } from "../lib/roles";
import { ApplyEditor } from "./ApplyEditor";
import { AttentionActions } from "./AttentionActions";
import { ErrorAlert } from "./ErrorAlert";
import { HealthTab } from "./health/HealthTab";
import { JsonBlock } from "./JsonDiff";
import { OriginNote } from "./OriginNote";
import { PendingBadge, StateBadge } from "./PendingBadge";
import { ResourceForm } from "./ResourceForm";
import { RetireDialog } from "./recovery/RetireDialog";
import { RetirementNotice, RetiringBadge } from "./recovery/RetiringBadge";
import { OpenRotationNotice, useOpenRotation } from "./rotation/OpenRotationNotice";
import { RotationWizard } from "./rotation/RotationWizard";
import { StatusTable } from "./StatusTable";

type Mode = "view" | "edit" | "apply";

export function ResourceDrawer({
  kind,
  name,
  onClose,
  onOpenDlq,
}: {
  kind: ResourceKind;
  name: string | null;
  onClose: () => void;
  /** Opens the DLQ page filtered to a target (the Health tab's link). */
  onOpenDlq?: (target: string) => void;
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
          {resource.data && <EnabledBadge resource={resource.data} />}
          {resource.data && <RetiringBadge resource={resource.data} />}
          {resource.data && <PendingBadge pending={resource.data.pending} />}
        </Group>
      }
      data-testid="resource-drawer"
    >
      {resource.isError && <ErrorAlert error={resource.error as never} />}
      {resource.data && mode === "view" && (
        <Details
          resource={resource.data}
          onMode={setMode}
          onDeleted={close}
          onOpenDlq={onOpenDlq}
        />
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

/** ENABLED / DISABLED for endpoints (as the table shows it); nothing for other kinds. */
function EnabledBadge({ resource }: { resource: ResourceView }) {
  const on = enabled(resource);
  if (on === null) return null;
  return (
    <Badge variant="dot" color={on ? "green" : "gray"} data-testid="drawer-enabled">
      {on ? "enabled" : "disabled"}
    </Badge>
  );
}

function Details({
  resource,
  onMode,
  onDeleted,
  onOpenDlq,
}: {
  resource: ResourceView;
  onMode: (mode: Mode) => void;
  onDeleted: () => void;
  onOpenDlq?: (target: string) => void;
}) {
  const queue = useQueueWrite();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [tab, setTab] = useState("spec");
  const [confirmDisable, setConfirmDisable] = useState(false);
  const [retiring, setRetiring] = useState(false);
  const [rotating, setRotating] = useState(false);
  const history = useHistory(resource.kind, resource.name);
  const openRotation = useOpenRotation(resource.name, resource.kind === "target");
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
  const changeRefused = useRoleRefusal(
    "admin",
    `changing or deleting ${resource.kind} ${resource.name}`,
  );
  const trafficRefused = useRoleRefusal(
    "operator",
    resource.kind === "target" ? "rotating its credentials" : "enabling or disabling it",
  );
  return (
    <Stack gap="md">
      {pending && pending.state === "needs_attention" && (
        <Alert color="red" title="This change needs attention">
          <Stack gap="xs">
            <Text size="sm">{pending.error?.message}</Text>
            <AttentionActions
              id={pending.op_id}
              state={pending.state}
              error={pending.error}
              kind={resource.kind}
              name={resource.name}
            />
          </Stack>
        </Alert>
      )}
      {(changeRefused ?? trafficRefused) && (
        <Text size="sm" c="dimmed" data-testid="role-note">
          {changeRefused ?? trafficRefused}
        </Text>
      )}
      <Group gap="xs">
        <Button
          size="xs"
          onClick={() => onMode("edit")}
          disabled={changeRefused !== null}
          data-testid="edit"
        >
          Edit
        </Button>
        <Button
          size="xs"
          variant="light"
          onClick={() => onMode("apply")}
          disabled={changeRefused !== null}
          data-testid="apply"
        >
          Apply JSON
        </Button>
        {on !== null && (
          <Button
            size="xs"
            variant="outline"
            color={on ? "orange" : "green"}
            onClick={() => (on ? setConfirmDisable(true) : write("enable"))}
            disabled={trafficRefused !== null}
            data-testid="toggle-enabled"
          >
            {on ? "Disable…" : "Enable"}
          </Button>
        )}
        <Button
          size="xs"
          variant="light"
          color="red"
          onClick={() => setConfirmDelete(true)}
          disabled={changeRefused !== null}
          data-testid="delete"
        >
          Delete
        </Button>
        {resource.kind === "target" && resource.version > 0 && (
          <Button
            size="xs"
            variant="light"
            color="yellow"
            onClick={() => setRotating(true)}
            disabled={trafficRefused !== null}
            data-testid="rotate"
          >
            {openRotation ? "Resume rotation…" : "Rotate credentials…"}
          </Button>
        )}
        {resource.version > 0 && (
          <Button
            size="xs"
            variant="subtle"
            color="red"
            onClick={() => setRetiring(true)}
            disabled={changeRefused !== null}
            data-testid="retire"
          >
            Retire…
          </Button>
        )}
      </Group>
      <RetirementNotice resource={resource} />
      {resource.kind === "target" && (
        <OpenRotationNotice target={resource.name} onResume={() => setRotating(true)} />
      )}
      <Text size="sm" c="dimmed">
        Version {resource.version || "— (not yet on the control plane)"} · updated{" "}
        {shortTime(resource.updated_at)}
      </Text>
      <Tabs value={tab} onChange={(v) => setTab(v ?? "spec")}>
        <Tabs.List>
          <Tabs.Tab value="spec">Spec</Tabs.Tab>
          <Tabs.Tab value="status">Status</Tabs.Tab>
          <Tabs.Tab value="health" data-testid="tab-health">
            Health
          </Tabs.Tab>
          <Tabs.Tab value="history" data-testid="tab-history">
            History
          </Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="spec" pt="sm">
          <JsonBlock value={resource.spec} height={380} />
        </Tabs.Panel>
        <Tabs.Panel value="status" pt="sm">
          <StatusTable status={resource.status} />
        </Tabs.Panel>
        <Tabs.Panel value="health" pt="sm">
          {/* Asked for only once opened: a drawer opened for its spec fetches no metrics. */}
          {tab === "health" && (
            <HealthTab kind={resource.kind} name={resource.name} onOpenDlq={onOpenDlq} />
          )}
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
                <Table.Tr key={entry.id} data-testid={`history-${entry.id}`}>
                  <Table.Td>{shortTime(entry.created_at)}</Table.Td>
                  <Table.Td>
                    {operationLabels[entry.operation]}
                    <OriginNote origin={entry.origin} />
                  </Table.Td>
                  <Table.Td>
                    <StateBadge state={entry.state} />
                  </Table.Td>
                  <Table.Td>
                    <AttentionActions
                      id={entry.id}
                      state={entry.state}
                      error={entry.error}
                      kind={entry.kind}
                      name={entry.name}
                    />
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
      <Modal
        opened={confirmDisable}
        onClose={() => setConfirmDisable(false)}
        title={`Disable endpoint ${resource.name}?`}
      >
        <Stack gap="sm" data-testid="disable-confirm">
          <Text size="sm">
            While it is disabled, {resource.name} refuses every new event (HTTP 409{" "}
            <code>endpoint_disabled</code>): senders must retry later or lose them. Deliveries
            already accepted go on. Enable it again to accept events.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirmDisable(false)}>
              Cancel
            </Button>
            <Button
              color="orange"
              onClick={() => {
                write("disable");
                setConfirmDisable(false);
              }}
              data-testid="confirm-disable"
            >
              Disable {resource.name}
            </Button>
          </Group>
        </Stack>
      </Modal>
      {rotating && <RotationWizard target={resource.name} onClose={() => setRotating(false)} />}
      {retiring && (
        <RetireDialog
          kind={resource.kind}
          name={resource.name}
          onClose={() => setRetiring(false)}
        />
      )}
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
          <Alert
            color="orange"
            title={`${users.length} ${users.length === 1 ? "flow uses" : "flows use"} it`}
          >
            <Text size="sm">
              The control plane refuses the delete while these exist. Delete or change them first:
            </Text>
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
            disabled={dependants.isPending || users.length > 0}
            data-testid="confirm-delete"
          >
            {users.length > 0 ? `Delete ${users.join(", ")} first` : "Delete"}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
