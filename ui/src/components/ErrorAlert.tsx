import { Alert } from "@mantine/core";
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
  return (
    <Alert
      color="red"
      icon={<IconAlertTriangle size={18} />}
      title={title ?? "Not accepted"}
      data-testid="error-alert"
    >
      {error.message}
      {detail?.field ? ` (field: ${detail.field})` : ""}
      {detail?.used_by?.length ? ` — still used by ${detail.used_by.join(", ")}` : ""}
    </Alert>
  );
}
