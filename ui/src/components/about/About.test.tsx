import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { AppInfo, UpdateSettingsView, UpdateStatus } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { AboutButton } from "./AboutDialog";
import { UpdateNotice } from "./UpdateNotice";

const info: AppInfo = {
  version: "0.1.0",
  commit: "0123456789abcdef0123456789abcdef01234567",
  build_date: "2026-12-01T07:20:55Z",
  tauri_version: "2.12.5",
  webview_version: "2.48.3",
  os: "Debian GNU/Linux 12 (bookworm) (x86_64)",
  log_file: "/home/op/.local/share/dev.switchyard.console/logs/switchyard.log",
  data_dir: "/home/op/.local/share/switchyard",
  signed_updates: true,
};

const settings = (over: Partial<UpdateSettingsView> = {}): UpdateSettingsView => ({
  feed_url: "https://releases.example.com/latest.json",
  auto_check: null,
  signed_updates: true,
  installable: true,
  ...over,
});

describe("About", () => {
  it("shows the version, commit, build date and log file, and copies the diagnostics", async () => {
    const calls = mockCommands({
      app_info: () => info,
      diagnostics: () => "Switchyard diagnostics\nversion         0.1.0\noutbox          0 pending",
    });
    renderUi(<AboutButton />);
    fireEvent.click(screen.getByTestId("about-button"));
    expect(await screen.findByTestId("about-commit")).toHaveTextContent(info.commit ?? "");
    expect(screen.getByTestId("about-built")).toHaveTextContent("2026-12-01T07:20:55Z");
    expect(screen.getByTestId("about-log-file")).toHaveTextContent(/logs\/switchyard\.log$/);
    await waitFor(() => expect(screen.getByTestId("copy-diagnostics")).toBeEnabled());
    fireEvent.click(screen.getByTestId("copy-diagnostics"));
    expect(await screen.findByTestId("diagnostics-text")).toHaveValue(
      "Switchyard diagnostics\nversion         0.1.0\noutbox          0 pending",
    );
    expect(calls.map(([c]) => c)).toContain("diagnostics");
  });

  it("says when the build carries no commit", async () => {
    mockCommands({ app_info: () => ({ ...info, commit: null }) });
    renderUi(<AboutButton />);
    fireEvent.click(screen.getByTestId("about-button"));
    expect(await screen.findByTestId("about-commit")).toHaveTextContent(/^unknown/);
  });
});

describe("Updates", () => {
  it("asks on the first launch and stores the answer; checks nothing by itself", async () => {
    let saved: UpdateSettingsView = settings();
    const calls = mockCommands({
      update_settings: () => saved,
      update_status: () => ({ state: "idle" }),
      save_update_settings: ({ input }) => {
        saved = settings({ feed_url: input.feed_url, auto_check: input.auto_check });
        return saved;
      },
    });
    renderUi(<UpdateNotice />);
    fireEvent.click(await screen.findByTestId("update-optin"));
    fireEvent.click(await screen.findByTestId("update-optin-no"));
    await waitFor(() =>
      expect(calls.find(([c]) => c === "save_update_settings")?.[1]).toEqual({
        input: { feed_url: "https://releases.example.com/latest.json", auto_check: false },
      }),
    );
    // Decided: the question is gone.
    await waitFor(() => expect(screen.queryByTestId("update-optin")).toBeNull());
    expect(calls.map(([c]) => c)).not.toContain("check_update");
  });

  it("offers the version with what changed, and shows a refused download", async () => {
    let status: UpdateStatus = { state: "idle" };
    mockCommands({
      app_info: () => info,
      update_settings: () => settings({ auto_check: false }),
      update_status: () => status,
      check_update: () => {
        status = {
          state: "available",
          version: "0.2.0",
          current_version: "0.1.0",
          notes: "Faster DLQ paging.",
          date: null,
        };
        return status;
      },
      download_update: () => {
        status = {
          state: "failed",
          refused: true,
          message:
            "The download of version 0.2.0 did not match its signature. It was refused and nothing was installed; Switchyard 0.1.0 keeps running.",
        };
        return status;
      },
    });
    renderUi(<AboutButton />);
    fireEvent.click(screen.getByTestId("about-button"));
    fireEvent.click(await screen.findByTestId("updates-tab"));
    fireEvent.click(await screen.findByTestId("update-check"));
    expect(await screen.findByText("Version 0.2.0 available (you have 0.1.0)")).toBeInTheDocument();
    expect(screen.getByTestId("update-notes")).toHaveTextContent("Faster DLQ paging.");
    fireEvent.click(screen.getByTestId("update-download"));
    expect(await screen.findByText("Update refused")).toBeInTheDocument();
    expect(screen.getByTestId("update-state")).toHaveTextContent("0.1.0 keeps running");
  });

  it("refuses a plain-http feed with the field named, and keeps the old one", async () => {
    mockCommands({
      app_info: () => info,
      update_settings: () => settings(),
      update_status: () => ({ state: "idle" }),
      save_update_settings: () => {
        throw {
          code: "invalid_input",
          message: "feed_url: must use https (plain http only on 127.0.0.1, ::1 or localhost)",
          problem: null,
        };
      },
    });
    renderUi(<AboutButton />);
    fireEvent.click(screen.getByTestId("about-button"));
    fireEvent.click(await screen.findByTestId("updates-tab"));
    const input = await screen.findByTestId("update-feed");
    fireEvent.change(input, { target: { value: "http://releases.example.com/latest.json" } });
    fireEvent.click(screen.getByTestId("update-feed-save"));
    expect(await screen.findByText(/must use https/)).toBeInTheDocument();
  });
});
