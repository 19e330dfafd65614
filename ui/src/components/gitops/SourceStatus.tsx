import { Alert, Badge, Code, Group, Loader, Stack, Table, Text } from "@mantine/core";
import { IconAlertTriangle, IconCircleCheck } from "@tabler/icons-react";
import type { GitopsStatus, IpcError } from "../../ipc/bindings";
import { relativeTime } from "../../lib/format";
import { ErrorAlert } from "../ErrorAlert";

const show = (v: unknown) => (v === null || v === undefined ? "—" : JSON.stringify(v));

/** Last applied commit, whether the ref moved on, and what drifted (against live state). */
export function SourceStatus({
  status,
  loading,
  error,
}: {
  status: GitopsStatus | undefined;
  loading: boolean;
  error: IpcError | null;
}) {
  if (error) return <ErrorAlert error={error} title="Status unavailable" />;
  if (!status) return loading ? <Loader size="sm" /> : null;
  const src = status.source;
  const clean =
    !status.behind &&
    status.drifted + status.missing + status.applying === 0 &&
    src.applied_commit !== null;
  return (
    <Stack gap="xs" data-testid="source-status">
      <Group gap="sm">
        {clean ? (
          <Badge color="green" leftSection={<IconCircleCheck size={12} />} data-testid="in-sync">
            In sync
          </Badge>
        ) : (
          <Badge color="orange" data-testid="not-in-sync">
            {src.applied_commit === null && status.applying === 0
              ? "Never applied"
              : status.applying > 0
                ? "Applying"
                : status.drifted + status.missing > 0
                  ? "Drifted"
                  : "Behind the ref"}
          </Badge>
        )}
        <Text size="sm">
          Last applied commit:{" "}
          {src.applied_commit ? (
            <>
              <Code data-testid="applied-commit">{src.applied_commit.slice(0, 12)}</Code>{" "}
              {relativeTime(src.applied_at)}
            </>
          ) : (
            "none yet"
          )}
        </Text>
        <Text size="sm" c="dimmed">
          {status.in_sync} in sync · {status.drifted} drifted · {status.missing} missing ·{" "}
          {status.applying} applying
        </Text>
      </Group>
      {status.behind && status.head_commit && (
        <Text size="sm">
          The ref <Code>{src.spec.git_ref}</Code> is {src.applied_commit ? "now " : ""}at{" "}
          <Code>{status.head_commit.slice(0, 12)}</Code>: plan it to see what applying it changes.
        </Text>
      )}
      {status.head_error && (
        <Alert color="yellow" icon={<IconAlertTriangle size={16} />}>
          Cannot read the repository: {status.head_error}
        </Alert>
      )}
      {status.resources.filter((r) => r.state !== "applying").length > 0 && (
        <Table data-testid="drift-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Resource</Table.Th>
              <Table.Th>Drift</Table.Th>
              <Table.Th>Changed by</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {status.resources
              .filter((r) => r.state !== "applying")
              .map((r) => (
                <Table.Tr key={`${r.kind}/${r.name}`}>
                  <Table.Td>
                    {r.kind}/{r.name}
                  </Table.Td>
                  <Table.Td>
                    {r.state === "missing"
                      ? "deleted outside Git"
                      : r.changes.map((c) => (
                          <div key={c.field}>
                            <Code>{c.field}</Code>: {show(c.before)} (Git) → {show(c.after)}
                          </div>
                        ))}
                  </Table.Td>
                  <Table.Td>
                    {r.changed_by
                      ? `${r.changed_by}, ${relativeTime(r.changed_at)}`
                      : "outside this console"}
                  </Table.Td>
                </Table.Tr>
              ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
