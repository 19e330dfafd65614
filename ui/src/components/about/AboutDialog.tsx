import {
  ActionIcon,
  Button,
  Code,
  Group,
  Modal,
  Stack,
  Table,
  Tabs,
  Text,
  Textarea,
  Tooltip,
} from "@mantine/core";
import { IconCopy, IconInfoCircle } from "@tabler/icons-react";
import { useState } from "react";
import { call, toIpcError } from "../../ipc/client";
import { ErrorAlert } from "../ErrorAlert";
import { useAppInfo } from "./queries";
import { UpdatePanel } from "./UpdatePanel";

/** The header's About button and its dialog: versions, where things live, updates. */
export function AboutButton() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Tooltip label="About Switchyard, diagnostics and updates">
        <ActionIcon
          variant="default"
          size="lg"
          onClick={() => setOpen(true)}
          aria-label="About"
          data-testid="about-button"
        >
          <IconInfoCircle size={16} />
        </ActionIcon>
      </Tooltip>
      <Modal opened={open} onClose={() => setOpen(false)} title="About Switchyard" size="lg">
        {open && <AboutBody />}
      </Modal>
    </>
  );
}

function AboutBody() {
  const info = useAppInfo();
  if (info.error) return <ErrorAlert error={toIpcError(info.error)} />;
  const i = info.data;
  if (!i) return null;
  const rows: [string, string][] = [
    ["Version", i.version],
    ["Commit", i.commit ?? "unknown (built without git metadata)"],
    ["Built", i.build_date],
    ["Webview", i.webview_version ?? "unknown"],
    ["Tauri", i.tauri_version],
    ["System", i.os],
    ["Log file", i.log_file ?? "unknown"],
    ["Data", i.data_dir],
  ];
  return (
    <Tabs defaultValue="about">
      <Tabs.List>
        <Tabs.Tab value="about" data-testid="about-tab">
          About
        </Tabs.Tab>
        <Tabs.Tab value="updates" data-testid="updates-tab">
          Updates
        </Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="about" pt="sm">
        <Stack gap="sm">
          <Table data-testid="about-table" withRowBorders={false} verticalSpacing={4}>
            <Table.Tbody>
              {rows.map(([k, v]) => (
                <Table.Tr key={k}>
                  <Table.Td w={110}>
                    <Text size="sm" c="dimmed">
                      {k}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Code data-testid={`about-${k.toLowerCase().replace(" ", "-")}`}>{v}</Code>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <CopyDiagnostics />
        </Stack>
      </Tabs.Panel>
      <Tabs.Panel value="updates" pt="sm">
        <UpdatePanel />
      </Tabs.Panel>
    </Tabs>
  );
}

/** Copies the diagnostics text; shows it too, so it can be copied by hand if the clipboard
 * is unavailable. It never contains a token. */
function CopyDiagnostics() {
  const [text, setText] = useState<string | null>(null);
  const [copied, setCopied] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  const copy = async () => {
    setError(null);
    try {
      const body = await call("diagnostics", {});
      setText(body);
      try {
        await navigator.clipboard.writeText(body);
        setCopied(true);
      } catch {
        setCopied(false);
      }
    } catch (e) {
      setError(e);
    }
  };
  return (
    <Stack gap="xs">
      <Group>
        <Button
          variant="default"
          leftSection={<IconCopy size={16} />}
          onClick={copy}
          data-testid="copy-diagnostics"
        >
          Copy diagnostics
        </Button>
        {copied === true && (
          <Text size="sm" c="teal" data-testid="diagnostics-copied">
            Copied to the clipboard
          </Text>
        )}
        {copied === false && (
          <Text size="sm" c="orange">
            The clipboard is not available here: select the text below and copy it.
          </Text>
        )}
      </Group>
      {error !== null && <ErrorAlert error={toIpcError(error)} />}
      {text && (
        <Textarea
          value={text}
          readOnly
          autosize
          minRows={6}
          styles={{ input: { fontFamily: "monospace", fontSize: 12 } }}
          data-testid="diagnostics-text"
        />
      )}
    </Stack>
  );
}
