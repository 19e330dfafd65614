import {
  ActionIcon,
  Button,
  Checkbox,
  Code,
  Grid,
  Group,
  List,
  Modal,
  NavLink,
  Paper,
  Stack,
  Text,
  TextInput,
  Title,
  Tooltip,
} from "@mantine/core";
import { IconBrandGit, IconGitPullRequest, IconSearch, IconTrash } from "@tabler/icons-react";
import { useState } from "react";
import { ErrorAlert } from "../components/ErrorAlert";
import { PlanSummaryBadges, PlanView } from "../components/gitops/PlanView";
import { SourceForm } from "../components/gitops/SourceForm";
import { SourceStatus } from "../components/gitops/SourceStatus";
import { WaveProgress } from "../components/gitops/WaveProgress";
import type { ApplyReport, GitopsPlan, GitopsSource, IpcError } from "../ipc/bindings";
import {
  useApply,
  useGitopsProgress,
  useGitopsSources,
  useGitopsStatus,
  usePlan,
  useRemoveSource,
} from "../ipc/gitopsQueries";
import { relativeTime } from "../lib/format";

/** The confirmation of an apply: the plan's summary, in words. */
function summaryLines(plan: GitopsPlan): string[] {
  const s = plan.summary;
  const lines = [
    s.create && `create ${s.create} resource(s)`,
    s.update && `update ${s.update} resource(s) (each only if unchanged since the plan)`,
    s.delete && `delete ${s.delete} resource(s) this source created`,
    s.release && `stop managing ${s.release} resource(s) (nothing deleted)`,
    s.drifted && `leave ${s.drifted} drifted resource(s) as they are`,
    s.orphaned && `keep ${s.orphaned} resource(s) no longer in Git (prune is off)`,
  ];
  return lines.filter((l): l is string => typeof l === "string");
}

function SourcePanel({ source }: { source: GitopsSource }) {
  const status = useGitopsStatus(source.id);
  const plan = usePlan();
  const apply = useApply();
  const remove = useRemoveSource();
  const [prune, setPrune] = useState(false);
  const [selfHeal, setSelfHeal] = useState(false);
  const [allowDeleteAll, setAllowDeleteAll] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [applied, setApplied] = useState<ApplyReport | null>(null);
  const progress = useGitopsProgress(applied?.source ?? null, applied?.commit ?? null);
  const current = plan.data;
  const runPlan = () => {
    setApplied(null);
    plan.mutate({
      spec: source.spec,
      options: { prune, self_heal: selfHeal, allow_delete_all: prune && allowDeleteAll },
    });
  };
  const runApply = () => {
    if (!current) return;
    setConfirming(false);
    apply.mutate(current, {
      onSuccess: (report) => {
        setApplied(report);
        plan.reset();
      },
    });
  };
  const done = progress.data?.complete;
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <div>
          <Title order={4} data-testid="source-title">
            {source.id}
          </Title>
          <Text size="sm" c="dimmed">
            ref <Code>{source.spec.git_ref}</Code> · {source.managed} managed resource(s)
          </Text>
        </div>
        <Tooltip label="Forget this source (its resources stay on the control plane)">
          <ActionIcon
            variant="subtle"
            color="red"
            aria-label="Remove source"
            onClick={() => remove.mutate(source.id)}
          >
            <IconTrash size={16} />
          </ActionIcon>
        </Tooltip>
      </Group>
      <Paper withBorder p="sm">
        <SourceStatus
          status={status.data}
          loading={status.isFetching}
          error={status.isError ? (status.error as unknown as IpcError) : null}
        />
        <Group mt="xs">
          <Button
            size="xs"
            variant="default"
            onClick={() => status.refetch()}
            loading={status.isFetching}
            data-testid="source-check"
          >
            Check drift
          </Button>
        </Group>
      </Paper>
      <Group>
        <Checkbox
          label="Prune (delete what this source created and Git no longer declares)"
          checked={prune}
          onChange={(e) => setPrune(e.currentTarget.checked)}
          data-testid="opt-prune"
        />
        <Checkbox
          label="Self-heal drift"
          checked={selfHeal}
          onChange={(e) => setSelfHeal(e.currentTarget.checked)}
        />
        {prune && (
          <Checkbox
            label="Allow deleting everything it manages"
            checked={allowDeleteAll}
            onChange={(e) => setAllowDeleteAll(e.currentTarget.checked)}
          />
        )}
      </Group>
      <Group>
        <Button
          leftSection={<IconGitPullRequest size={16} />}
          onClick={runPlan}
          loading={plan.isPending}
          data-testid="plan-button"
        >
          Plan
        </Button>
        {current && (
          <Button
            color="green"
            onClick={() => setConfirming(true)}
            disabled={
              !current.summary.create &&
              !current.summary.update &&
              !current.summary.delete &&
              !current.summary.release
            }
            loading={apply.isPending}
            data-testid="apply-button"
          >
            Apply…
          </Button>
        )}
      </Group>
      {plan.isError && <ErrorAlert error={plan.error as unknown as IpcError} title="No plan" />}
      {apply.isError && (
        <ErrorAlert error={apply.error as unknown as IpcError} title="Not applied" />
      )}
      {applied && (
        <Paper withBorder p="sm" data-testid="apply-progress">
          <Text fw={600} mb="xs">
            {done ? "Applied" : "Applying"} commit <Code>{applied.commit.slice(0, 12)}</Code>:{" "}
            {applied.queued} write(s) queued
            {applied.resumed ? `, ${applied.resumed} already queued` : ""}
          </Text>
          {progress.data && <WaveProgress progress={progress.data} />}
        </Paper>
      )}
      {current && <PlanView plan={current} />}
      <Modal
        opened={confirming && !!current}
        onClose={() => setConfirming(false)}
        title="Apply this commit?"
        size="lg"
      >
        {current && (
          <Stack data-testid="apply-confirm">
            <Text size="sm">
              Commit <Code>{current.commit.slice(0, 12)}</Code> “{current.commit_title}” of{" "}
              <Code>{current.source}</Code> on profile <b>{current.profile}</b> will:
            </Text>
            <PlanSummaryBadges plan={current} />
            <List size="sm">
              {summaryLines(current).map((line) => (
                <List.Item key={line}>{line}</List.Item>
              ))}
            </List>
            <Text size="xs" c="dimmed">
              Writes go through the outbox in waves (targets and endpoints, then flows, deletes
              last), each exactly once; a resource changed since this plan needs attention instead
              of being overwritten.
            </Text>
            <Group justify="flex-end">
              <Button variant="default" onClick={() => setConfirming(false)}>
                Cancel
              </Button>
              <Button color="green" onClick={runApply} data-testid="apply-confirm-button">
                Apply {current.summary.create + current.summary.update + current.summary.delete}{" "}
                write(s)
              </Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}

/** GitOps: sources, the plan of a commit as a diff per resource, apply with progress, drift. */
export function GitopsPage() {
  const sources = useGitopsSources();
  const [selected, setSelected] = useState<string | null>(null);
  const [filter, setFilter] = useState("");
  const list = (sources.data ?? []).filter((s) =>
    s.id.toLowerCase().includes(filter.trim().toLowerCase()),
  );
  const source = sources.data?.find((s) => s.id === selected) ?? sources.data?.[0] ?? null;
  return (
    <Stack gap="sm" h="100%" style={{ minHeight: 0, overflow: "auto" }} data-testid="gitops-page">
      <Group gap="xs">
        <IconBrandGit size={22} />
        <Title order={3}>GitOps</Title>
      </Group>
      {sources.isError && <ErrorAlert error={sources.error as unknown as IpcError} />}
      {/* The grid's inner row is a gutter wider than the page (its negative margins): hidden,
          or the page scrolls sideways by those few pixels. */}
      <Grid overflow="hidden">
        <Grid.Col span={{ base: 12, md: 4 }}>
          <Stack gap="sm">
            <Paper withBorder p="sm">
              <Text fw={600} mb="xs">
                Sources
              </Text>
              {(sources.data?.length ?? 0) > 3 && (
                <TextInput
                  size="xs"
                  mb="xs"
                  placeholder="Filter sources"
                  leftSection={<IconSearch size={14} />}
                  value={filter}
                  onChange={(e) => setFilter(e.currentTarget.value)}
                />
              )}
              {sources.data?.length === 0 && (
                <Text size="sm" c="dimmed">
                  No source yet: add a repository below.
                </Text>
              )}
              {list.map((s) => (
                <NavLink
                  key={s.id}
                  active={s.id === source?.id}
                  label={s.id}
                  description={
                    s.applied_commit
                      ? `applied ${s.applied_commit.slice(0, 12)} ${relativeTime(s.applied_at)}`
                      : "never applied"
                  }
                  onClick={() => setSelected(s.id)}
                  data-testid="source-item"
                />
              ))}
            </Paper>
            <Paper withBorder p="sm">
              <Text fw={600} mb="xs">
                Add a source
              </Text>
              <SourceForm onAdded={(s) => setSelected(s.id)} />
            </Paper>
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 8 }}>
          {source ? (
            <SourcePanel key={source.id} source={source} />
          ) : (
            <Text c="dimmed">
              Keep endpoints, targets and flows in Git as YAML or JSON manifests; add the repository
              to see what a commit would change, then apply it.
            </Text>
          )}
        </Grid.Col>
      </Grid>
    </Stack>
  );
}
