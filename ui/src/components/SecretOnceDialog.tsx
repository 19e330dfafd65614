// The signing secret of a target this app just created, shown once. The core hands each value
// out a single time (take_shown_secrets) and keeps none on disk; this dialog holds it only
// while open, so closing it is the last time anyone sees it (a rotation makes a new one).
import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from "@mantine/core";
import { useCallback, useEffect, useState } from "react";
import type { ShownSecretView } from "../ipc/bindings";
import { call, onCoreEvent } from "../ipc/client";
import { useActiveProfile } from "../ipc/queries";

export function SecretOnceDialog() {
  const profile = useActiveProfile();
  const [shown, setShown] = useState<ShownSecretView[]>([]);

  const take = useCallback(async (of: string) => {
    const taken = await call("take_shown_secrets", { profile: of }).catch(() => []);
    if (taken.length > 0) setShown((before) => [...before, ...taken]);
  }, []);

  useEffect(() => {
    if (!profile) return;
    // What arrived while this profile was not the active one (or before this listener).
    take(profile);
    let unlisten: (() => void) | undefined;
    let cancelled = false;
    onCoreEvent((event) => {
      if (event.type === "secret_shown" && event.profile === profile) take(profile);
    }).then((fn) => {
      if (cancelled) fn();
      else unlisten = fn;
    });
    return () => {
      cancelled = true;
      unlisten?.();
      // Another control plane's secrets are not shown under this one's name.
      setShown([]);
    };
  }, [profile, take]);

  const current = shown[0];
  if (!current) return null;
  return (
    <Modal
      opened
      onClose={() => setShown((s) => s.slice(1))}
      title={`Signing secret of ${current.target}`}
      closeOnClickOutside={false}
      size="lg"
      data-testid="secret-once"
    >
      <Stack>
        <Alert color="yellow" title="Shown once">
          Switchyard does not keep this value. Store it where the receiver of {current.target}{" "}
          verifies webhooks (Standard Webhooks, the <Code>webhook-signature</Code> header); if it is
          lost, rotate the target's secret.
        </Alert>
        <Group wrap="nowrap" align="center">
          <Code block style={{ flex: 1, wordBreak: "break-all" }} data-testid="secret-value">
            {current.value}
          </Code>
          <CopyButton value={current.value}>
            {({ copied, copy }) => (
              <Button variant="light" onClick={copy} data-testid="secret-copy">
                {copied ? "Copied" : "Copy"}
              </Button>
            )}
          </CopyButton>
        </Group>
        {current.secret_id && (
          <Text size="sm" c="dimmed">
            Secret id {current.secret_id}
          </Text>
        )}
        <Group justify="flex-end">
          <Button onClick={() => setShown((s) => s.slice(1))} data-testid="secret-stored">
            I have stored it
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
