import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Finding } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { CredentialsNotice } from "./CredentialsNotice";

const credential = (
  cls: Finding["class"],
  target: string,
  severity: Finding["severity"],
): Finding => ({
  id: `${cls}:target:${target}`,
  class: cls,
  severity,
  subject: { kind: "target", id: target },
  detail: "…",
  evidence: { until: "2026-12-05T12:00:00Z" },
  actions: [],
});

describe("CredentialsNotice", () => {
  it("lists open overlaps and expiring certificates with their dates and opens the target", async () => {
    const findings = [
      credential("signing_overlap_open", "billing", "info"),
      credential("certificate_expiring", "erp", "warning"),
      credential("failing_target", "crm", "critical"),
    ];
    mockCommands({
      recovery_findings: () => ({
        findings,
        server_checked_at: new Date().toISOString(),
        server_unavailable: null,
        unchecked: [],
      }),
    });
    const opened: string[] = [];
    const now = Date.parse("2026-12-05T12:00:00Z") - 479 * 3_600_000;
    renderUi(<CredentialsNotice now={now} onOpenTarget={(t) => opened.push(t)} />);
    const notice = await screen.findByTestId("overview-credentials");
    expect(notice).toHaveTextContent("2 targets' credentials need a look");
    expect(notice).toHaveTextContent("billing");
    expect(notice).toHaveTextContent("signing-secret overlap ends");
    expect(notice).toHaveTextContent("erp");
    expect(notice).toHaveTextContent("client certificate expires");
    // The badge's format ("19 d left"), not "in 19 d".
    expect(notice).toHaveTextContent("(19 d left)");
    expect(notice).not.toHaveTextContent("crm");
    await userEvent.click(screen.getByTestId("overview-credential-erp"));
    expect(opened).toEqual(["erp"]);
  });

  it("shows nothing when no credential needs a look", async () => {
    const calls = mockCommands({
      recovery_findings: () => ({
        findings: [credential("failing_target", "crm", "critical")],
        server_checked_at: new Date().toISOString(),
        server_unavailable: null,
        unchecked: [],
      }),
    });
    renderUi(<CredentialsNotice now={Date.now()} />);
    // Answered, and rendered from that answer.
    await waitFor(() => expect(calls.some(([c]) => c === "recovery_findings")).toBe(true));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByTestId("overview-credentials")).toBeNull();
  });
});
