// Recovery: what is wrong and what to do. The control plane's findings (stuck deliveries,
// failing targets, …) and this console's own (writes that need attention, outcomes unknown,
// orphan references, …), grouped by severity, each with its evidence and fixes; below them the
// retirements under way.
import {
  Alert,
  Box,
  Button,
  Card,
  Group,
  SegmentedControl,
  Stack,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { IconRefresh, IconSearch } from "@tabler/icons-react";
import { useRef, useState } from "react";
import { stateWords } from "../components/dlq/ReplayDialog";
import { FindingCard } from "../components/recovery/FindingCard";
import { RetirementProgress } from "../components/recovery/RetirementProgress";
import { Waiting } from "../components/StaleNote";
import type { Finding, Severity } from "../ipc/bindings";
import { useActiveProfile } from "../ipc/queries";
import { useFindings, useRecoveryWrites, useRetirements } from "../ipc/recoveryQueries";
import { relativeTime } from "../lib/format";
import {
  emptyFindingFilter,
  type FindingFilter,
  groupBySeverity,
  severityWords,
} from "../lib/recovery";
import { useNow } from "../lib/useNow";

export function RecoveryPage() {
  const profile = useActiveProfile();
  const findings = useFindings();
  const writes = useRecoveryWrites();
  const retirements = useRetirements();
  const now = useNow(1000);
  const [filter, setFilter] = useState<FindingFilter>(emptyFindingFilter);
  const data = findings.data;
  const groups = data ? groupBySeverity(data.findings, filter) : [];
  const total = data?.findings.length ?? 0;
  const shown = groups.reduce((n, g) => n + g.findings.length, 0);
  const fixes = (writes.data ?? []).filter((w) => w.action === "fix");
  const resolved = useResolved(data?.findings, !!data && !data.server_unavailable).filter((f) =>
    fixes.some((w) => w.subject === f.id),
  );
  return (
    <Box style={{ flex: 1, minHeight: 0, overflow: "auto" }} data-testid="recovery">
      <Stack gap="md">
        <Group justify="space-between">
          <Title order={3}>Recovery</Title>
          <Group gap="xs">
            <Text size="sm" c="dimmed" data-testid="recovery-checked">
              {data?.server_checked_at
                ? `Checked ${relativeTime(Date.parse(data.server_checked_at), now)}`
                : findings.isFetching
                  ? "Checking…"
                  : ""}
            </Text>
            <Button
              size="xs"
              variant="default"
              leftSection={<IconRefresh size={14} />}
              loading={findings.isFetching}
              onClick={() => findings.refetch()}
              data-testid="recovery-refresh"
            >
              Check again
            </Button>
          </Group>
        </Group>
        <Group>
          <TextInput
            placeholder="Filter by class, subject or detail"
            leftSection={<IconSearch size={14} />}
            value={filter.text}
            onChange={(e) => setFilter({ ...filter, text: e.currentTarget.value })}
            style={{ flex: 1, maxWidth: 420 }}
            data-testid="recovery-filter"
          />
          <SegmentedControl
            size="xs"
            value={filter.severity}
            onChange={(v) => setFilter({ ...filter, severity: v as Severity | "all" })}
            data={[
              { value: "all", label: "All" },
              { value: "critical", label: "Critical" },
              { value: "warning", label: "Warning" },
              { value: "info", label: "Info" },
            ]}
          />
        </Group>
        {data?.server_unavailable && (
          <Alert
            color="yellow"
            title="The control plane's findings are missing"
            data-testid="recovery-server-missing"
          >
            {data.server_unavailable} Only this console's findings are shown.
          </Alert>
        )}
        {findings.isError && (
          <Alert color="red" title="Could not check">
            {(findings.error as { message?: string }).message}
          </Alert>
        )}
        <Waiting query={findings} profile={profile} what="what needs attention" />
        {data && total === 0 && !data.server_unavailable && (
          <Card withBorder data-testid="recovery-clean">
            <Text>
              Nothing needs attention: the control plane and this console found no problem.
            </Text>
          </Card>
        )}
        {data && total > 0 && shown === 0 && (
          <Text c="dimmed">No finding matches the filter ({total} in all).</Text>
        )}
        {groups.map((g) => (
          <Stack key={g.severity} gap="xs" data-testid={`recovery-group-${g.severity}`}>
            <Title order={5} c={severityWords[g.severity].color}>
              {severityWords[g.severity].label} ({g.findings.length})
            </Title>
            {g.findings.map((f) => (
              <FindingCard
                key={f.id}
                f={f}
                now={now}
                writes={(writes.data ?? []).filter((w) => w.action === "fix" && w.subject === f.id)}
              />
            ))}
          </Stack>
        ))}
        {resolved.length > 0 && (
          <Stack gap="xs" data-testid="recovery-resolved">
            <Title order={5} c="green">
              Fixed since this page opened ({resolved.length})
            </Title>
            {resolved.map((f) => (
              <FindingCard
                key={f.id}
                f={f}
                now={now}
                resolved
                writes={fixes.filter((w) => w.subject === f.id)}
              />
            ))}
          </Stack>
        )}
        <Title order={4} mt="md">
          Retirements
        </Title>
        {retirements.data === undefined ? (
          retirements.isError ? (
            <Text c="red" size="sm" data-testid="retirements-error">
              Not loaded: {(retirements.error as { message?: string }).message}
            </Text>
          ) : (
            <Waiting query={retirements} profile={profile} what="the retirements" />
          )
        ) : retirements.data.length === 0 ? (
          <Text c="dimmed" size="sm">
            None. Retire a resource from its drawer or the command palette (Retire…).
          </Text>
        ) : (
          retirements.data.map((r) => (
            <Card withBorder padding="sm" key={r.id}>
              {r.server ? (
                <RetirementProgress r={r.server} now={now} />
              ) : (
                <Text size="sm" data-testid={`retirement-${r.id}`}>
                  {r.kind} {r.name}: {r.start ? stateWords[r.start.state].label : "not known here"}
                  {r.start?.error ? ` — ${r.start.error}` : ""}
                  {r.offline ? ` (the control plane does not answer: ${r.offline})` : ""}
                </Text>
              )}
            </Card>
          ))
        )}
      </Stack>
    </Box>
  );
}

/**
 * The findings seen while the page is open that the latest check no longer reports: a fixed
 * finding stays on screen with its fix's outcome instead of vanishing at the next check. Only
 * a complete check (the control plane answered) says a finding is gone; a profile switch
 * forgets them (another control plane's findings are not shown under this one's name).
 */
function useResolved(findings: Finding[] | undefined, complete: boolean): Finding[] {
  const profile = useActiveProfile();
  const seen = useRef<{ profile: string | undefined; all: Map<string, Finding> }>({
    profile,
    all: new Map(),
  });
  if (seen.current.profile !== profile) seen.current = { profile, all: new Map() };
  const current = new Set((findings ?? []).map((f) => f.id));
  for (const f of findings ?? []) seen.current.all.set(f.id, f);
  if (!findings || !complete) return [];
  return [...seen.current.all.values()].filter((f) => !current.has(f.id));
}
