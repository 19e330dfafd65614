// The overview's credential warnings: targets whose signing-secret rotation is in its overlap
// (the control plane's `signing_overlap_open` findings), each with when it ends and a link to
// the target, where "Rotate credentials…" resumes or finishes the rotation.
import { Alert, Anchor, Group, List, Text } from "@mantine/core";
import { useFindings } from "../../ipc/recoveryQueries";
import { relativeTime } from "../../lib/format";

const credentialClasses = new Set(["signing_overlap_open"]);

export function CredentialsNotice({
  now,
  onOpenTarget,
}: {
  now: number;
  onOpenTarget?: (target: string) => void;
}) {
  const findings = useFindings();
  const open = (findings.data?.findings ?? []).filter((f) => credentialClasses.has(f.class));
  if (open.length === 0) return null;
  return (
    <Alert
      color="yellow"
      title={
        open.length === 1
          ? "1 target is in a signing-secret overlap"
          : `${open.length} targets are in a signing-secret overlap`
      }
      data-testid="overview-credentials"
    >
      <Text size="sm" mb={4}>
        Their receivers must accept both secrets until the overlap ends. Verify the new secret, then
        promote it, or roll back.
      </Text>
      <List size="sm">
        {open.map((f) => (
          <List.Item key={f.id}>
            <Group gap={6} wrap="nowrap">
              <Anchor
                component="button"
                onClick={() => onOpenTarget?.(f.subject.id)}
                data-testid={`overview-credential-${f.subject.id}`}
              >
                {f.subject.id}
              </Anchor>
              {f.evidence.until && (
                <Text size="sm" c="dimmed">
                  overlap ends {new Date(f.evidence.until).toLocaleString()} (
                  {relativeTime(Date.parse(f.evidence.until), now)})
                </Text>
              )}
            </Group>
          </List.Item>
        ))}
      </List>
    </Alert>
  );
}
