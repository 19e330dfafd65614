import { Badge, Code, Group, Paper, Stack, Switch, Table, Text, TextInput } from "@mantine/core";
import { IconSearch } from "@tabler/icons-react";
import { useMemo, useState } from "react";
import type { GitopsPlan, JsonValue, PlanAction, PlanItem } from "../../ipc/bindings";

export const actionColors: Record<PlanAction, string> = {
  create: "green",
  update: "blue",
  delete: "red",
  unchanged: "gray",
  drifted: "orange",
  orphaned: "yellow",
  release: "grape",
};

const actionNotes: Partial<Record<PlanAction, string>> = {
  drifted: "Changed outside Git; left as it is unless Self-heal is on.",
  orphaned: "No longer in the commit; kept unless Prune is on.",
  release: "No longer in the commit and not made by GitOps: released, never deleted.",
};

const show = (v: JsonValue | null) => (v === null ? "—" : JSON.stringify(v));

/** The plan's counts, one badge per action that occurs. */
export function PlanSummaryBadges({ plan }: { plan: GitopsPlan }) {
  const s = plan.summary;
  const counts: [PlanAction, number][] = [
    ["create", s.create],
    ["update", s.update],
    ["delete", s.delete],
    ["drifted", s.drifted],
    ["orphaned", s.orphaned],
    ["release", s.release],
    ["unchanged", s.unchanged],
  ];
  return (
    <Group gap="xs" data-testid="plan-summary">
      {counts
        .filter(([, n]) => n > 0)
        .map(([action, n]) => (
          <Badge key={action} color={actionColors[action]} variant="light" data-action={action}>
            {n} {action}
          </Badge>
        ))}
    </Group>
  );
}

function ItemCard({ item }: { item: PlanItem }) {
  return (
    <Paper withBorder p="sm" data-testid={`plan-item-${item.kind}-${item.name}`}>
      <Group justify="space-between" wrap="nowrap">
        <Group gap="xs" wrap="nowrap">
          <Badge color={actionColors[item.action]} data-testid="plan-action">
            {item.action}
          </Badge>
          <Text fw={600}>
            {item.kind}/{item.name}
          </Text>
          {item.base_version !== null && (
            <Text size="xs" c="dimmed">
              v{item.base_version}
            </Text>
          )}
        </Group>
        <Text size="xs" c="dimmed" truncate>
          {item.path}
          {item.wave > 0 ? ` · wave ${item.wave}` : ""}
        </Text>
      </Group>
      {actionNotes[item.action] && (
        <Text size="xs" c="dimmed" mt={4}>
          {actionNotes[item.action]}
        </Text>
      )}
      {item.action === "create" && item.desired !== null && (
        <Code block mt="xs">
          {JSON.stringify(item.desired, null, 2)}
        </Code>
      )}
      {item.action !== "create" && item.changes.length > 0 && (
        <Table mt="xs" withRowBorders={false} verticalSpacing={2}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Field</Table.Th>
              <Table.Th>Live</Table.Th>
              <Table.Th>{item.action === "delete" ? "" : "Git"}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {item.changes.map((c) => (
              <Table.Tr key={c.field} data-testid="plan-change">
                <Table.Td>
                  <Code>{c.field}</Code>
                </Table.Td>
                <Table.Td c="red.7" style={{ wordBreak: "break-all" }}>
                  {show(c.before)}
                </Table.Td>
                <Table.Td c="green.8" style={{ wordBreak: "break-all" }}>
                  {item.action === "delete" ? "" : show(c.after)}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Paper>
  );
}

/** A plan as a readable diff per resource, filterable; unchanged resources on request. */
export function PlanView({ plan }: { plan: GitopsPlan }) {
  const [filter, setFilter] = useState("");
  const [unchanged, setUnchanged] = useState(false);
  const items = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return plan.items.filter(
      (i) =>
        (unchanged || i.action !== "unchanged") &&
        words.every((w) => `${i.action} ${i.kind}/${i.name} ${i.path ?? ""}`.includes(w)),
    );
  }, [plan, filter, unchanged]);
  return (
    <Stack gap="xs" data-testid="plan-view">
      <Group justify="space-between">
        <Text size="sm">
          Commit <Code>{plan.commit.slice(0, 12)}</Code> “{plan.commit_title}” · {plan.manifests}{" "}
          manifests
        </Text>
        <PlanSummaryBadges plan={plan} />
      </Group>
      <Group>
        <TextInput
          placeholder="Filter by name, kind, action or file"
          leftSection={<IconSearch size={16} />}
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
          w={320}
          aria-label="Filter the plan"
        />
        <Switch
          label={`Show ${plan.summary.unchanged} unchanged`}
          checked={unchanged}
          onChange={(e) => setUnchanged(e.currentTarget.checked)}
        />
      </Group>
      {items.length === 0 && (
        <Text c="dimmed" data-testid="plan-empty">
          {filter
            ? "No resource matches the filter."
            : "Nothing to do: the control plane matches this commit."}
        </Text>
      )}
      {items.map((item) => (
        <ItemCard key={`${item.kind}/${item.name}`} item={item} />
      ))}
    </Stack>
  );
}
