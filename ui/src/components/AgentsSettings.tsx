import {
  Alert,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  ScrollArea,
  SegmentedControl,
  Stack,
  Switch,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { IconCheck, IconCopy, IconInfoCircle, IconLock } from "@tabler/icons-react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { AgentsSettings as Settings } from "../ipc/bindings";
import { call, toIpcError } from "../ipc/client";
import { scope, scoped, useActiveProfile } from "../ipc/queries";
import { relativeTime, shortTime } from "../lib/format";
import { ErrorAlert } from "./ErrorAlert";

type Mode = "read-only" | "writes" | "destructive";

const modeFlags: Record<Mode, string[]> = {
  "read-only": [],
  writes: ["--allow-writes"],
  destructive: ["--allow-destructive"],
};

const modeHelp: Record<Mode, string> = {
  "read-only":
    "Agents can list resources, the outbox, the DLQ, events and replays. Nothing changes.",
  writes:
    "Adds create, update, apply, enable/disable and replays of up to 100 dead deliveries. Every write waits in the outbox below, marked as the agent's.",
  destructive: "Adds deletes and replays of any size.",
};

/** Quotes an argument for a POSIX shell when it needs it. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The `mcpServers` entry for Claude Desktop and Cursor. */
export function hostConfig(profile: string, argv: string[]): string {
  const [command, ...args] = argv;
  return JSON.stringify({ mcpServers: { [`switchyard-${profile}`]: { command, args } } }, null, 2);
}

function Copyable({ value, testId }: { value: string; testId: string }) {
  return (
    <Group align="flex-start" gap="xs" wrap="nowrap">
      <Code
        block
        style={{ flex: 1, whiteSpace: "pre-wrap", wordBreak: "break-all" }}
        data-testid={testId}
      >
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button
            size="xs"
            variant="default"
            onClick={copy}
            leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
          >
            {copied ? "Copied" : "Copy"}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}

function outcomeColor(outcome: string): string {
  if (outcome === "ok") return "green";
  if (outcome === "not_allowed" || outcome === "profile_read_only") return "orange";
  return "red";
}

function RecentCalls({ settings }: { settings: Settings }) {
  const [filter, setFilter] = useState("");
  const needle = filter.trim().toLowerCase();
  const calls = settings.recent_calls.filter(
    (c) =>
      !needle ||
      [c.actor, c.detail ?? "", c.outcome, c.resource ?? ""].some((f) =>
        f.toLowerCase().includes(needle),
      ),
  );
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={6}>Recent MCP calls</Title>
        <TextInput
          size="xs"
          placeholder="Filter by agent, tool, key or outcome"
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
          data-testid="agents-calls-filter"
          w={280}
        />
      </Group>
      {settings.recent_calls.length === 0 ? (
        <Text size="sm" c="dimmed">
          No agent has called this profile yet.
        </Text>
      ) : (
        <ScrollArea.Autosize mah={260}>
          <Table striped highlightOnHover data-testid="agents-calls">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Agent</Table.Th>
                <Table.Th>Call</Table.Th>
                <Table.Th>Outcome</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {calls.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td title={shortTime(c.at)}>
                    <Text size="xs">{relativeTime(c.at)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs">{c.actor.replace(/^mcp \((.*)\)$/, "$1")}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace">
                      {c.detail}
                    </Text>
                  </Table.Td>
                  <Table.Td style={{ whiteSpace: "nowrap" }}>
                    <Badge
                      size="xs"
                      variant="light"
                      color={outcomeColor(c.outcome)}
                      style={{ overflow: "visible" }}
                      miw="max-content"
                    >
                      {c.outcome.replaceAll("_", " ")}
                    </Badge>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollArea.Autosize>
      )}
    </Stack>
  );
}

const agentsKey = (profile: string | null) => [...scope(profile).all, "agents"] as const;

function Body({ settings }: { settings: Settings }) {
  const client = useQueryClient();
  const [mode, setMode] = useState<Mode>("read-only");
  const mark = useMutation({
    mutationFn: (readOnly: boolean) =>
      call("set_agents_read_only", { profile: settings.profile, readOnly }),
    onSuccess: (next) => client.setQueryData(agentsKey(next.profile), next),
  });
  const argv = [...settings.command, ...modeFlags[mode]];
  // Nothing to offer for the sandbox: no command line or mode would reach it.
  if (settings.sandbox)
    return (
      <Alert color="yellow" icon={<IconInfoCircle size={16} />} data-testid="agents-sandbox">
        The sandbox runs inside this app and its token never leaves it, so an agent cannot use it.
        Add a control plane profile and open this window on it.
      </Alert>
    );
  return (
    <Stack gap="md">
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          Mode
        </Text>
        <SegmentedControl
          value={mode}
          onChange={(v) => setMode(v as Mode)}
          data={[
            { value: "read-only", label: "Read-only" },
            { value: "writes", label: "Writes" },
            { value: "destructive", label: "Destructive" },
          ]}
          data-testid="agents-mode"
        />
        <Text size="xs" c="dimmed">
          {modeHelp[mode]} Every write needs the agent's request key: a retry never applies a change
          twice.
        </Text>
      </Stack>
      <Switch
        checked={settings.agents_read_only}
        onChange={(e) => mark.mutate(e.currentTarget.checked)}
        disabled={mark.isPending}
        label="Read-only for agents"
        description="Agents may read but never write through this profile, whatever mode their server was started in."
        thumbIcon={settings.agents_read_only ? <IconLock size={10} /> : undefined}
        data-testid="agents-read-only"
      />
      {mark.error && <ErrorAlert error={toIpcError(mark.error)} />}
      {settings.agents_read_only && mode !== "read-only" && (
        <Text size="xs" c="orange" data-testid="agents-mode-overridden">
          This profile is read-only for agents: the server will offer reads only.
        </Text>
      )}
      <Tabs defaultValue="command" keepMounted>
        <Tabs.List>
          <Tabs.Tab value="command">Command line</Tabs.Tab>
          <Tabs.Tab value="config">Claude Desktop / Cursor configuration</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="command" pt="xs">
          <Copyable value={argv.map(shellQuote).join(" ")} testId="agents-command" />
          {!settings.program_found && (
            <Text size="xs" c="dimmed" mt={4}>
              <Code>switchyard</Code> is looked up on PATH; give its full path if your agent host
              does not inherit your shell's PATH.
            </Text>
          )}
        </Tabs.Panel>
        <Tabs.Panel value="config" pt="xs">
          <Copyable value={hostConfig(settings.profile, argv)} testId="agents-config" />
        </Tabs.Panel>
      </Tabs>
      <RecentCalls settings={settings} />
    </Stack>
  );
}

/** Settings → "Agents (MCP)": how to run `switchyard mcp` for the active profile. */
export function AgentsSettings({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const profile = useActiveProfile();
  const settings = useQuery({
    ...scoped(
      profile,
      (_s, p) => agentsKey(p),
      opened ? (p) => call("agents_settings", { profile: p }) : null,
    ),
    refetchInterval: opened ? 5_000 : false,
  });
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      size="xl"
      title={<Text fw={600}>Agents (MCP){settings.data ? ` — ${settings.data.profile}` : ""}</Text>}
    >
      {settings.error && <ErrorAlert error={toIpcError(settings.error)} />}
      {settings.data && <Body settings={settings.data} />}
    </Modal>
  );
}
