// The overview's credential warnings, from the control plane's findings: targets whose
// signing-secret rotation is in its overlap (`signing_overlap_open`) and targets whose active
// client certificate expires within 30 days (`certificate_expiring`), each with its date and a
// link to the target, where "Rotate credentials…" resumes or starts the rotation.
import { Alert, Anchor, Group, List, Text } from "@mantine/core";
import type { Finding } from "../../ipc/bindings";
import { useFindings } from "../../ipc/recoveryQueries";
import { timeLeft } from "../../lib/format";

const what: Partial<Record<Finding["class"], string>> = {
  signing_overlap_open: "signing-secret overlap ends",
  certificate_expiring: "client certificate expires",
};

export function CredentialsNotice({
  now,
  onOpenTarget,
}: {
  now: number;
  onOpenTarget?: (target: string) => void;
}) {
  const findings = useFindings();
  const shown = (findings.data?.findings ?? []).filter((f) => what[f.class]);
  if (shown.length === 0) return null;
  const urgent = shown.some((f) => f.class === "certificate_expiring" && f.severity !== "info");
  const targets = new Set(shown.map((f) => f.subject.id)).size;
  return (
    <Alert
      color={urgent ? "orange" : "yellow"}
      title={
        targets === 1
          ? "1 target's credentials need a look"
          : `${targets} targets' credentials need a look`
      }
      data-testid="overview-credentials"
    >
      <Text size="sm" mb={4}>
        During an overlap receivers must accept both secrets: verify the new one, then promote it or
        roll back. An expiring certificate needs a new one uploaded, tested and activated before its
        date.
      </Text>
      <List size="sm">
        {shown.map((f) => (
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
                <Text size="sm" c={f.severity === "info" ? "dimmed" : "orange"}>
                  {what[f.class]} {new Date(f.evidence.until).toLocaleString()} (
                  {timeLeft(Date.parse(f.evidence.until), now)})
                </Text>
              )}
            </Group>
          </List.Item>
        ))}
      </List>
    </Alert>
  );
}
