import { Alert, List } from "@mantine/core";
import { IconAlertTriangle } from "@tabler/icons-react";
import type { IpcError, WriteError } from "../ipc/bindings";

/** A failed command or a refused write, in words, naming the field and what depends on it. */
export function ErrorAlert({
  error,
  title,
}: {
  error: IpcError | WriteError | null;
  title?: string;
}) {
  if (!error) return null;
  const detail: WriteError | null = "problem" in error ? error.problem : error;
  // A message of several lines (a plan refusing manifests lists one problem a line) is shown
  // as a list: run together in one paragraph only the first problem could be read.
  const [head, ...lines] = error.message.split("\n").filter((l) => l.trim() !== "");
  return (
    <Alert
      color="red"
      icon={<IconAlertTriangle size={18} />}
      title={title ?? "Not accepted"}
      data-testid="error-alert"
    >
      {head}
      {detail?.field ? ` (field: ${detail.field})` : ""}
      {detail?.used_by?.length ? ` — still used by ${detail.used_by.join(", ")}` : ""}
      {lines.length > 0 && (
        <List size="sm" mt={4} data-testid="error-lines">
          {lines.map((line) => (
            <List.Item key={line}>{line.trim()}</List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}
