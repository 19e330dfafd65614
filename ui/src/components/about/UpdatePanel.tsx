import { Alert, Button, Group, Progress, Stack, Switch, Text, TextInput } from "@mantine/core";
import {
  IconAlertTriangle,
  IconDownload,
  IconRefresh,
  IconRotateClockwise,
} from "@tabler/icons-react";
import { useEffect, useState } from "react";
import type { UpdateStatus } from "../../ipc/bindings";
import { toIpcError } from "../../ipc/client";
import { ErrorAlert } from "../ErrorAlert";
import {
  useCheckUpdate,
  useDownloadUpdate,
  useInstallUpdate,
  useSaveUpdateSettings,
  useUpdateSettings,
  useUpdateStatus,
} from "./queries";

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** The update feed, the opt-in, and the check → download → restart flow. */
export function UpdatePanel() {
  const settings = useUpdateSettings();
  const status = useUpdateStatus();
  const save = useSaveUpdateSettings();
  const check = useCheckUpdate();
  const download = useDownloadUpdate();
  const install = useInstallUpdate();
  const [feed, setFeed] = useState("");
  useEffect(() => setFeed(settings.data?.feed_url ?? ""), [settings.data?.feed_url]);

  const s = settings.data;
  if (!s) return null;
  const saveFeed = () => save.mutate({ feed_url: feed || null, auto_check: s.auto_check });
  const current: UpdateStatus = status.data ?? { state: "idle" };

  return (
    <Stack gap="sm" data-testid="update-panel">
      {!s.signed_updates && (
        <Alert color="gray" icon={<IconAlertTriangle size={16} />} data-testid="update-no-key">
          This build carries no update key (it was built from source), so it cannot verify updates.
          Install new versions from a package.
        </Alert>
      )}
      <Group align="flex-end" wrap="nowrap">
        <TextInput
          style={{ flex: 1 }}
          label="Update feed URL"
          description="https, or http on this machine only"
          placeholder="https://releases.example.com/switchyard/latest.json"
          value={feed}
          onChange={(e) => setFeed(e.currentTarget.value)}
          data-testid="update-feed"
        />
        <Button
          variant="default"
          onClick={saveFeed}
          loading={save.isPending}
          data-testid="update-feed-save"
        >
          Save
        </Button>
      </Group>
      {save.error && <ErrorAlert error={toIpcError(save.error)} />}
      <Switch
        label="Check for updates automatically (daily)"
        description="Off until you turn it on: a new install asks no server on its own."
        checked={s.auto_check === true}
        onChange={(e) => save.mutate({ feed_url: s.feed_url, auto_check: e.currentTarget.checked })}
        data-testid="update-auto"
      />
      <Group>
        <Button
          leftSection={<IconRefresh size={16} />}
          onClick={() => check.mutate()}
          loading={check.isPending || current.state === "checking"}
          disabled={!s.feed_url || !s.signed_updates}
          data-testid="update-check"
        >
          Check for updates
        </Button>
      </Group>
      <UpdateState
        status={current}
        installable={s.installable}
        onDownload={() => download.mutate()}
        onInstall={() => install.mutate()}
        installing={install.isPending}
      />
      {install.error && <ErrorAlert error={toIpcError(install.error)} />}
    </Stack>
  );
}

function UpdateState(props: {
  status: UpdateStatus;
  installable: boolean;
  onDownload: () => void;
  onInstall: () => void;
  installing: boolean;
}) {
  const { status } = props;
  switch (status.state) {
    case "idle":
    case "checking":
      return null;
    case "up_to_date":
      return (
        <Text size="sm" data-testid="update-state">
          Switchyard {status.current_version} is the newest version.
        </Text>
      );
    case "available":
      return (
        <Stack gap="xs" data-testid="update-state">
          <Text fw={600}>
            Version {status.version} available (you have {status.current_version})
          </Text>
          <Text size="sm" c="dimmed">
            What changed:
          </Text>
          <Text size="sm" style={{ whiteSpace: "pre-wrap" }} data-testid="update-notes">
            {status.notes?.trim() || "The feed gives no release notes."}
          </Text>
          <Group>
            <Button
              leftSection={<IconDownload size={16} />}
              onClick={props.onDownload}
              data-testid="update-download"
            >
              Download {status.version}
            </Button>
          </Group>
        </Stack>
      );
    case "downloading": {
      const pct = status.total ? Math.min(100, (status.downloaded / status.total) * 100) : null;
      return (
        <Stack gap={4} data-testid="update-state">
          <Text size="sm">
            Downloading {status.version}: {mib(status.downloaded)}
            {status.total ? ` of ${mib(status.total)}` : ""}
          </Text>
          <Progress value={pct ?? 100} animated={pct === null} data-testid="update-progress" />
        </Stack>
      );
    }
    case "ready":
      return (
        <Stack gap="xs" data-testid="update-state">
          <Text size="sm">
            Version {status.version} is downloaded and its signature verified. It installs when
            Switchyard restarts; writes being sent finish first, queued ones stay in the outbox.
          </Text>
          {props.installable ? (
            <Group>
              <Button
                leftSection={<IconRotateClockwise size={16} />}
                onClick={props.onInstall}
                loading={props.installing}
                data-testid="update-install"
              >
                Restart to install {status.version}
              </Button>
            </Group>
          ) : (
            <Text size="sm" c="dimmed" data-testid="update-not-installable">
              This copy was not installed from a package, so it cannot replace itself; install
              {` ${status.version}`} from its package.
            </Text>
          )}
        </Stack>
      );
    case "installing":
      return (
        <Text size="sm" data-testid="update-state">
          Installing {status.version}; Switchyard restarts when it is done…
        </Text>
      );
    case "failed":
      return (
        <Alert
          color={status.refused ? "red" : "orange"}
          title={status.refused ? "Update refused" : "Update failed"}
          data-testid="update-state"
        >
          {status.message}
        </Alert>
      );
  }
}
