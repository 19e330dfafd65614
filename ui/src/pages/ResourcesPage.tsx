import { Button, Group, Modal, Stack, Text, Title } from "@mantine/core";
import { IconPlus, IconRefresh } from "@tabler/icons-react";
import { forwardRef, useImperativeHandle, useMemo, useRef, useState } from "react";
import { ErrorAlert } from "../components/ErrorAlert";
import { ResourceDrawer } from "../components/ResourceDrawer";
import { ResourceForm } from "../components/ResourceForm";
import { ResourceTable } from "../components/ResourceTable";
import type { IpcError, ResourceKind, SyncStatus } from "../ipc/bindings";
import { useGitopsManaged } from "../ipc/gitopsQueries";
import { useDeliveryMetrics } from "../ipc/healthQueries";
import { useActiveProfile, useResources, useSyncNow, useSyncStatus } from "../ipc/queries";
import { useRetirements } from "../ipc/recoveryQueries";
import { kindLabels } from "../lib/format";
import { groupsByName } from "../lib/health";
import { useHealthWindow } from "../lib/healthWindow";
import { openRetirements } from "../lib/recovery";
import { useRoleRefusal } from "../lib/roles";
import { useSendNotice } from "../lib/sendNotice";

/** What an empty list means: nothing on the control plane, or never fetched from it. */
export function emptyText(
  kind: ResourceKind,
  profile: string | undefined,
  status: SyncStatus | undefined,
): string {
  const who = profile ?? "the control plane";
  const many = kindLabels[kind].many.toLowerCase();
  const mine = status && status.profile === profile ? status : undefined;
  if (mine?.last_sync_at == null) {
    if (mine?.online === false)
      return `Not loaded yet: ${who} has not answered${mine.offline_reason ? ` (${mine.offline_reason})` : ""}. The list fills once it does.`;
    return `Loading the ${many} of ${who}…`;
  }
  return `No ${many} on ${who} yet.`;
}

export type ResourcesPageHandle = {
  create: () => void;
  focusFilter: () => void;
  open: (name: string) => void;
};

/** Endpoints, targets or flows: the table, the detail drawer and the create form. */
export const ResourcesPage = forwardRef<
  ResourcesPageHandle,
  {
    kind: ResourceKind;
    initialOpen?: string | null;
    /** Opens the DLQ page filtered to a target (a target drawer's Health tab). */
    onOpenDlq?: (target: string) => void;
  }
>(function ResourcesPage({ kind, initialOpen = null, onOpenDlq }, ref) {
  const resources = useResources(kind);
  // One metrics call for the whole table (the sparklines), the query the drawer's Health tab
  // and the Overview share for this grouping and window.
  const [window] = useHealthWindow();
  const metrics = useDeliveryMetrics(window, kind);
  const health = useMemo(() => groupsByName(metrics.data), [metrics.data]);
  const managed = useGitopsManaged(kind);
  const syncNow = useSyncNow();
  const profile = useActiveProfile();
  const status = useSyncStatus();
  const notice = useSendNotice();
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<string | null>(initialOpen);
  const filterRef = useRef<HTMLInputElement>(null);
  useImperativeHandle(ref, () => ({
    create: () => setCreating(true),
    focusFilter: () => filterRef.current?.focus(),
    open: (name) => setOpen(name),
  }));
  const retirements = useRetirements();
  const retiring = useMemo(() => openRetirements(retirements.data, kind), [retirements.data, kind]);
  const label = kindLabels[kind];
  const refused = useRoleRefusal("admin", `creating ${kind === "endpoint" ? "an" : "a"} ${kind}`);
  return (
    <Stack h="100%" gap="sm" style={{ minHeight: 0 }}>
      <Group justify="space-between">
        <Title order={3}>{label.many}</Title>
        <Group gap="xs">
          <Button
            variant="default"
            leftSection={<IconRefresh size={16} />}
            onClick={() => {
              syncNow.mutate();
              notice();
            }}
            loading={syncNow.isPending}
            data-testid="sync-now"
          >
            Sync
          </Button>
          <Button
            leftSection={<IconPlus size={16} />}
            onClick={() => setCreating(true)}
            disabled={refused !== null}
            title={refused ?? undefined}
            data-testid="new-resource"
          >
            New {label.one.toLowerCase()}
          </Button>
        </Group>
      </Group>
      {refused && (
        <Text size="sm" c="dimmed" data-testid="role-note">
          {refused}
        </Text>
      )}
      {resources.isError && <ErrorAlert error={resources.error as unknown as IpcError} />}
      <ResourceTable
        kind={kind}
        emptyText={emptyText(kind, profile, status.data)}
        items={resources.data ?? []}
        onOpen={(resource) => setOpen(resource.name)}
        filterRef={filterRef}
        managed={managed}
        health={metrics.data ? health : undefined}
        window={window}
        healthStale={metrics.isError}
        retirements={retiring}
      />
      <ResourceDrawer kind={kind} name={open} onClose={() => setOpen(null)} onOpenDlq={onOpenDlq} />
      <Modal
        opened={creating}
        onClose={() => setCreating(false)}
        title={`New ${label.one.toLowerCase()}`}
        size="lg"
      >
        {creating && <ResourceForm kind={kind} resource={null} onDone={() => setCreating(false)} />}
      </Modal>
    </Stack>
  );
});
