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
import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
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

/** Copies the diagnostics text (fetched when the dialog opens, so the copy happens within the
 * click) and shows it, so it can also be copied by hand. It never contains a token. */
function CopyDiagnostics() {
  const diagnostics = useQuery({
    queryKey: ["diagnostics"],
    queryFn: () => call("diagnostics", {}),
  });
  const [shown, setShown] = useState(false);
  const [copied, setCopied] = useState<boolean | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const copy = () => {
    const text = diagnostics.data;
    if (!text) return;
    setShown(true);
    setCopied(copyText(text));
    // The async clipboard API, where the webview grants it, confirms the copy.
    navigator.clipboard?.writeText(text).then(
      () => setCopied(true),
      () => {},
    );
  };
  return (
    <Stack gap="xs">
      <Group>
        <Button
          variant="default"
          leftSection={<IconCopy size={16} />}
          onClick={copy}
          loading={diagnostics.isPending}
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
      {diagnostics.error && <ErrorAlert error={toIpcError(diagnostics.error)} />}
      {shown && diagnostics.data && (
        <Textarea
          ref={area}
          value={diagnostics.data}
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

/** Copies within the click that asked for it: a selected off-screen text area and the
 * `copy` command, which WebKitGTK honours where `navigator.clipboard` is not granted. */
function copyText(text: string): boolean {
  const el = document.createElement("textarea");
  el.value = text;
  el.setAttribute("readonly", "");
  el.style.position = "fixed";
  el.style.left = "-10000px";
  document.body.appendChild(el);
  el.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  el.remove();
  return ok;
}
