import {
  ActionIcon,
  Badge,
  Button,
  Group,
  Menu,
  Modal,
  PasswordInput,
  Stack,
  Text,
  TextInput,
} from "@mantine/core";
import {
  IconCheck,
  IconChevronDown,
  IconPencil,
  IconPlus,
  IconRobot,
  IconTrash,
} from "@tabler/icons-react";
import { useState } from "react";
import type { IpcError, ProfileView } from "../ipc/bindings";
import { isIpcError } from "../ipc/client";
import {
  useActivateProfile,
  useHealth,
  useProfiles,
  useSaveProfile,
  useTestConnection,
} from "../ipc/queries";
import { AgentsSettings } from "./AgentsSettings";
import { ErrorAlert } from "./ErrorAlert";
import { RemoveProfile } from "./RemoveProfile";

/** "2 pending · 1 needs attention" next to a profile in the switcher, or nothing. */
function WaitingBadges({ profile }: { profile: ProfileView }) {
  return (
    <>
      {profile.pending > 0 && (
        <Badge size="xs" color="yellow" variant="light" data-testid={`pending-${profile.name}`}>
          {profile.pending} pending
        </Badge>
      )}
      {profile.needs_attention > 0 && (
        <Badge size="xs" color="red" variant="light" data-testid={`attention-${profile.name}`}>
          {profile.needs_attention} {profile.needs_attention === 1 ? "needs" : "need"} attention
        </Badge>
      )}
    </>
  );
}

/** Picks the control plane; shows its health and latency; add, edit, test and remove. */
export function ProfileSwitcher({ onOutbox }: { onOutbox?: () => void }) {
  const profiles = useProfiles();
  const health = useHealth();
  const activate = useActivateProfile();
  const [menuOpen, setMenuOpen] = useState(false);
  const [editing, setEditing] = useState<ProfileView | "new" | null>(null);
  const [removing, setRemoving] = useState<ProfileView | null>(null);
  const [agents, setAgents] = useState(false);
  const active = profiles.data?.find((p) => p.active);
  const h = health.data;
  // A dialog opened from the menu closes the menu first: it would cover the dialog's buttons.
  const openDialog = (open: () => void) => {
    setMenuOpen(false);
    open();
  };
  return (
    <Group gap="xs" wrap="nowrap">
      <Menu position="bottom-end" width={360} withinPortal opened={menuOpen} onChange={setMenuOpen}>
        <Menu.Target>
          <Button
            variant="default"
            rightSection={<IconChevronDown size={14} />}
            data-testid="profile-switcher"
          >
            {active ? active.name : "No control plane"}
          </Button>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Label>Control planes</Menu.Label>
          {(profiles.data ?? []).map((profile) => (
            <Menu.Item
              key={profile.name}
              data-testid={`profile-${profile.name}`}
              onClick={() => activate.mutate(profile.name)}
              leftSection={
                profile.active ? <IconCheck size={14} /> : <span style={{ width: 14 }} />
              }
              rightSection={
                <Group gap={2} onClick={(e) => e.stopPropagation()}>
                  {!profile.sandbox && (
                    <>
                      <ActionIcon
                        variant="subtle"
                        size="sm"
                        aria-label={`Edit ${profile.name}`}
                        onClick={() => openDialog(() => setEditing(profile))}
                      >
                        <IconPencil size={14} />
                      </ActionIcon>
                      <ActionIcon
                        variant="subtle"
                        size="sm"
                        color="red"
                        aria-label={`Remove ${profile.name}`}
                        onClick={() => openDialog(() => setRemoving(profile))}
                        data-testid={`remove-${profile.name}`}
                      >
                        <IconTrash size={14} />
                      </ActionIcon>
                    </>
                  )}
                </Group>
              }
            >
              <Group gap={6} wrap="nowrap">
                <Text size="sm">{profile.name}</Text>
                <WaitingBadges profile={profile} />
              </Group>
              <Text size="xs" c="dimmed" truncate>
                {profile.sandbox ? "embedded sandbox · demo data" : profile.url}
              </Text>
            </Menu.Item>
          ))}
          <Menu.Divider />
          <Menu.Item
            leftSection={<IconPlus size={14} />}
            onClick={() => openDialog(() => setEditing("new"))}
            data-testid="add-profile"
          >
            Add a control plane…
          </Menu.Item>
          <Menu.Item
            leftSection={<IconRobot size={14} />}
            onClick={() => openDialog(() => setAgents(true))}
            data-testid="agents-settings"
          >
            Agents (MCP)…
          </Menu.Item>
        </Menu.Dropdown>
      </Menu>
      <Badge
        variant="light"
        color={h ? (h.ok ? "green" : "red") : "gray"}
        data-testid="health"
        title={h?.error ?? h?.server_version ?? ""}
      >
        {h
          ? h.ok
            ? `healthy · ${h.latency_ms ?? "?"} ms${h.role ? ` · ${h.role}` : ""}`
            : "unreachable"
          : "checking…"}
      </Badge>
      <AgentsSettings opened={agents} onClose={() => setAgents(false)} />
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === "new" ? "Add a control plane" : `Edit ${editing?.name ?? ""}`}
      >
        {editing !== null && (
          <ProfileForm
            profile={editing === "new" ? null : editing}
            onDone={() => setEditing(null)}
          />
        )}
      </Modal>
      <Modal
        opened={removing !== null}
        onClose={() => setRemoving(null)}
        title={`Remove ${removing?.name}?`}
      >
        {removing && (
          <RemoveProfile
            profile={removing}
            onDone={() => setRemoving(null)}
            onOutbox={
              onOutbox &&
              (() => {
                setRemoving(null);
                onOutbox();
              })
            }
          />
        )}
      </Modal>
    </Group>
  );
}

export function ProfileForm({
  profile,
  onDone,
}: {
  profile: ProfileView | null;
  onDone: () => void;
}) {
  const [name, setName] = useState(profile?.name ?? "");
  const [url, setUrl] = useState(profile?.url ?? "http://127.0.0.1:8080");
  const [token, setToken] = useState("");
  const [error, setError] = useState<IpcError | null>(null);
  const save = useSaveProfile();
  const activate = useActivateProfile();
  const test = useTestConnection();
  const input = { name, url, token: token === "" ? null : token };
  const onSave = async () => {
    setError(null);
    try {
      const saved = await save.mutateAsync({ original: profile?.name ?? null, input });
      // A control plane just added is the one the person wants to look at.
      if (!profile) await activate.mutateAsync(saved.name);
      onDone();
    } catch (e) {
      setError(isIpcError(e) ? e : { code: "internal", message: String(e), problem: null });
    }
  };
  return (
    <Stack gap="sm" data-testid="profile-form">
      <TextInput
        label="Name"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        disabled={!!profile}
        data-testid="profile-name"
      />
      <TextInput
        label="URL"
        value={url}
        onChange={(e) => setUrl(e.currentTarget.value)}
        data-testid="profile-url"
      />
      <PasswordInput
        label="Token"
        description={
          profile
            ? "Leave empty to keep the stored token."
            : "Kept in the OS keychain (or a 0600 file), never shown again."
        }
        value={token}
        onChange={(e) => setToken(e.currentTarget.value)}
        data-testid="profile-token"
      />
      {test.data && (
        <Text size="sm" c={test.data.ok ? "green" : "red"} data-testid="test-result">
          {test.data.ok
            ? `Connected · ${test.data.latency_ms ?? "?"} ms · server ${test.data.server_version ?? "?"}${test.data.role ? ` · token role ${test.data.role}` : ""}`
            : `Failed: ${test.data.error}`}
        </Text>
      )}
      <ErrorAlert error={error} />
      <Group justify="space-between">
        <Button
          variant="light"
          onClick={() => test.mutate(input)}
          loading={test.isPending}
          data-testid="profile-test"
        >
          Test connection
        </Button>
        <Group gap="xs">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button onClick={onSave} loading={save.isPending} data-testid="profile-save">
            Save
          </Button>
        </Group>
      </Group>
    </Stack>
  );
}
