import {
  ActionIcon,
  AppShell,
  Badge,
  Group,
  Kbd,
  NavLink,
  Text,
  Title,
  Tooltip,
  useComputedColorScheme,
  useMantineColorScheme,
} from "@mantine/core";
import { useHotkeys } from "@mantine/hooks";
import { Spotlight, type SpotlightActionData, spotlight } from "@mantine/spotlight";
import {
  IconActivity,
  IconArrowsSplit,
  IconBrandGit,
  IconDashboard,
  IconInbox,
  IconLifebuoy,
  IconMailOff,
  IconMoon,
  IconPlugConnected,
  IconRepeat,
  IconSearch,
  IconSun,
  IconTarget,
} from "@tabler/icons-react";
import { RouterProvider, useRouterState } from "@tanstack/react-router";
import { Fragment, type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { AboutButton } from "./components/about/AboutDialog";
import { UpdateNotice } from "./components/about/UpdateNotice";
import { ProfileSwitcher } from "./components/ProfileSwitcher";
import { RetireDialog } from "./components/recovery/RetireDialog";
import { RotationWizard } from "./components/rotation/RotationWizard";
import { SecretOnceDialog } from "./components/SecretOnceDialog";
import { StatusBar } from "./components/StatusBar";
import type { ResourceKind } from "./ipc/bindings";
import { call } from "./ipc/client";
import {
  useActiveProfile,
  useOverview,
  useResourceSearch,
  useSyncNow,
  useSyncStatus,
} from "./ipc/queries";
import { useFindings } from "./ipc/recoveryQueries";
import { useCoreEvents } from "./lib/events";
import { kindLabels } from "./lib/format";
import { launchMarks, markFirstRender } from "./lib/launchMarks";
import { attentionCount } from "./lib/recovery";
import { useSendNotice } from "./lib/sendNotice";
import { type Page, pageOf } from "./nav";
import type { DlqSelection } from "./pages/DlqPage";
import type { ResourcesPageHandle } from "./pages/ResourcesPage";
import { createAppRouter } from "./router";
import { type Shell, ShellContext, usePageNavigation } from "./shell";

// Pages in navigation order; position n (from 1) is the Ctrl+<n> shortcut and the palette's
// hint for it: GitOps, ninth, is Ctrl+9, and Recovery, tenth, is Ctrl+0 (an eleventh page would
// get no key). The keyboard table in docs/desktop.md lists the same.
const pages: { id: Page; label: string; icon: ReactNode }[] = [
  { id: "overview", label: "Overview", icon: <IconDashboard size={18} /> },
  { id: "endpoint", label: "Endpoints", icon: <IconPlugConnected size={18} /> },
  { id: "target", label: "Targets", icon: <IconTarget size={18} /> },
  { id: "flow", label: "Flows", icon: <IconArrowsSplit size={18} /> },
  { id: "outbox", label: "Outbox", icon: <IconInbox size={18} /> },
  { id: "activity", label: "Activity", icon: <IconActivity size={18} /> },
  { id: "dlq", label: "DLQ", icon: <IconMailOff size={18} /> },
  { id: "replays", label: "Replays", icon: <IconRepeat size={18} /> },
  { id: "gitops", label: "GitOps", icon: <IconBrandGit size={18} /> },
  { id: "recovery", label: "Recovery", icon: <IconLifebuoy size={18} /> },
];

/** The Ctrl+<key> of the page at `index` (0-based): 1…9, then 0. */
const pageKey = (index: number): string | null =>
  index < 9 ? String(index + 1) : index === 9 ? "0" : null;

const NONE: Set<string> = new Set();

const isKind = (page: Page): page is ResourceKind =>
  page === "endpoint" || page === "target" || page === "flow";

/** The app: its frame around the page the route (the URL's hash) names. */
export function App() {
  const [router] = useState(() => createAppRouter({ frame: Frame }));
  return <RouterProvider router={router} />;
}

function Frame({ children }: { children: ReactNode }) {
  useCoreEvents();
  const page = pageOf(useRouterState({ select: (s) => s.location.pathname }));
  const nav = usePageNavigation();
  const profile = useActiveProfile();
  // The replay session shown belongs to the profile it was picked on.
  const [replayOf, setReplayOf] = useState<{ profile: string; id: string } | null>(null);
  const replay = replayOf && replayOf.profile === profile ? replayOf.id : null;
  const setReplay = (id: string | null) => setReplayOf(id && profile ? { profile, id } : null);
  // The DLQ rows ticked for a replay survive a visit to Replays and back (not a switch).
  const [picked, setPicked] = useState<{ profile: string; ids: Set<string> }>({
    profile: "",
    ids: NONE,
  });
  const setSelected = useCallback<DlqSelection["setSelected"]>(
    (update) =>
      setPicked((current) => ({
        profile: profile ?? "",
        ids: update(current.profile === profile ? current.ids : NONE),
      })),
    [profile],
  );
  const dlqSelection: DlqSelection = {
    selected: picked.profile === profile ? picked.ids : NONE,
    setSelected,
  };
  const [openOnArrival, setOpenOnArrival] = useState<string | null>(null);
  const [retiring, setRetiring] = useState<{ kind: ResourceKind; name: string } | null>(null);
  const [rotating, setRotating] = useState<string | null>(null);
  const findings = useFindings();
  const resourcesRef = useRef<ResourcesPageHandle>(null);
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme("light");
  const toggleScheme = () => setColorScheme(scheme === "dark" ? "light" : "dark");
  const syncNow = useSyncNow();
  const notice = useSendNotice();
  const status = useSyncStatus();
  const overview = useOverview();
  // The palette searches the cache as you type; it never loads every resource up front.
  const [query, setQuery] = useState("");
  const found = useResourceSearch(query);

  const go = (next: Page, open: string | null = null) => {
    setOpenOnArrival(open);
    nav.toPage(next);
    if (open && next === page) resourcesRef.current?.open(open);
  };
  // The DLQ page reads its filter from the route's search params (as a link to "#/dlq?…" does).
  const openDlqFor = (target: string) => {
    setOpenOnArrival(null);
    nav.toDlq(target);
  };
  // "New …" from the palette: the form opens once the page has mounted (the route changes
  // after a render, so the page is not there yet when the action runs).
  const createNext = useRef<ResourceKind | null>(null);
  const createHere = (kind: ResourceKind) => {
    if (page === kind) resourcesRef.current?.create();
    else {
      createNext.current = kind;
      go(kind);
    }
  };
  const shell: Shell = {
    go,
    openDlqFor,
    openOnArrival,
    resourcesRef,
    dlqSelection,
    replay,
    setReplay,
    takeCreate: (kind) => {
      const yes = createNext.current === kind;
      createNext.current = null;
      return yes;
    },
  };

  // Ctrl shortcuts work from anywhere, a text field included (nothing types with Ctrl held);
  // only the bare "/" leaves text fields alone.
  useHotkeys(
    [
      ...pages.flatMap((p, i) => {
        const key = pageKey(i);
        return key ? [[`mod+${key}`, () => go(p.id)] as [string, () => void]] : [];
      }),
      ["mod+N", () => isKind(page) && resourcesRef.current?.create()],
      ["mod+shift+L", toggleScheme],
      [
        "mod+shift+S",
        () => {
          syncNow.mutate();
          notice();
        },
      ],
    ],
    [],
  );
  // "/" reaches the page filter only when nothing covers the page: with a modal or drawer open
  // the filter is behind the overlay, and typing on there would filter the list unseen.
  useHotkeys([
    [
      "/",
      () => {
        if (!document.querySelector('[role="dialog"]')) resourcesRef.current?.focusFilter();
      },
    ],
  ]);

  const actions: SpotlightActionData[] = (() => {
    const jump = pages.map((p, i) => ({
      id: `page-${p.id}`,
      label: `Go to ${p.label}`,
      description: pageKey(i) ? `Ctrl+${pageKey(i)}` : undefined,
      group: "Pages",
      onClick: () => go(p.id),
    }));
    const create = (["endpoint", "target", "flow"] as ResourceKind[]).map((kind) => ({
      id: `new-${kind}`,
      label: `New ${kindLabels[kind].one.toLowerCase()}`,
      group: "Actions",
      onClick: () => createHere(kind),
    }));
    const misc = [
      {
        id: "sync",
        label: "Sync now",
        description: "Ctrl+Shift+S",
        group: "Actions",
        onClick: () => {
          syncNow.mutate();
          notice();
        },
      },
      {
        id: "theme",
        label: "Toggle light/dark theme",
        description: "Ctrl+Shift+L",
        group: "Actions",
        onClick: toggleScheme,
      },
    ];
    const matched = query.trim() ? (found.data ?? []) : [];
    const resources = matched.map((r) => ({
      id: `${r.kind}/${r.name}`,
      label: r.name,
      description: kindLabels[r.kind].one,
      group: "Resources",
      onClick: () => go(r.kind, r.name),
    }));
    // Retiring from the palette needs the name typed: only resources the search found.
    const retire = matched.map((r) => ({
      id: `retire/${r.kind}/${r.name}`,
      label: `Retire ${kindLabels[r.kind].one.toLowerCase()} ${r.name}…`,
      group: "Recovery",
      onClick: () => setRetiring({ kind: r.kind, name: r.name }),
    }));
    const rotate = matched
      .filter((r) => r.kind === "target")
      .map((r) => ({
        id: `rotate/${r.name}`,
        label: `Rotate credentials of target ${r.name}…`,
        group: "Recovery",
        onClick: () => setRotating(r.name),
      }));
    return [...jump, ...create, ...misc, ...resources, ...rotate, ...retire];
  })();

  // The first screen with data on screen: tell the Rust side the launch is complete (logged,
  // benched).
  const ready = overview.isSuccess && status.isSuccess;
  const reported = useRef(false);
  useEffect(() => markFirstRender(), []);
  useEffect(() => {
    if (ready && !reported.current) {
      reported.current = true;
      // Once the frame with the data is painted, not when React committed it: the frame
      // callback runs before that paint, a task it queues after it.
      requestAnimationFrame(() =>
        setTimeout(() => call("ui_ready", { marks: launchMarks() }).catch(() => {}), 0),
      );
    }
  }, [ready]);

  const attention = status.data?.needs_attention ?? 0;
  const recoveryCount = attentionCount(findings.data?.findings);
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 210, breakpoint: 0 }}
      footer={{ height: 34 }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Title order={4}>Switchyard</Title>
            <Tooltip label="Command palette">
              <ActionIcon
                variant="default"
                onClick={() => spotlight.open()}
                aria-label="Command palette"
                data-testid="palette-button"
                size="lg"
              >
                <IconSearch size={16} />
              </ActionIcon>
            </Tooltip>
            <Text size="xs" c="dimmed">
              <Kbd size="xs">Ctrl</Kbd> + <Kbd size="xs">K</Kbd>
            </Text>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <UpdateNotice />
            <ProfileSwitcher onOutbox={() => go("outbox")} />
            <Tooltip label="Light/dark theme (Ctrl+Shift+L)">
              <ActionIcon
                variant="default"
                size="lg"
                onClick={toggleScheme}
                aria-label="Toggle theme"
                data-testid="theme-toggle"
              >
                {scheme === "dark" ? <IconSun size={16} /> : <IconMoon size={16} />}
              </ActionIcon>
            </Tooltip>
            <AboutButton />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        {pages.map((p, i) => (
          <NavLink
            key={p.id}
            label={p.label}
            leftSection={p.icon}
            active={page === p.id}
            onClick={() => go(p.id)}
            rightSection={
              p.id === "outbox" && attention > 0 ? (
                <Text size="xs" c="red" fw={700}>
                  {attention}
                </Text>
              ) : p.id === "recovery" && recoveryCount > 0 ? (
                <Badge size="sm" color="red" circle data-testid="nav-recovery-count">
                  {recoveryCount}
                </Badge>
              ) : (
                <Text size="xs" c="dimmed">
                  {pageKey(i) ? `^${pageKey(i)}` : ""}
                </Text>
              )
            }
            data-testid={`nav-${p.id}`}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main style={{ display: "flex", flexDirection: "column", height: "100dvh" }}>
        {/* Keyed by profile: a switch drops every page's local state (open drawers, selections,
            forms) along with the data, so nothing from one control plane stays on screen
            under another's name. */}
        <Fragment key={profile ?? ""}>
          <ShellContext.Provider value={shell}>{children}</ShellContext.Provider>
        </Fragment>
      </AppShell.Main>
      <SecretOnceDialog />
      {rotating && (
        <RotationWizard
          key={`${profile}/${rotating}`}
          target={rotating}
          onClose={() => setRotating(null)}
        />
      )}
      {retiring && (
        <RetireDialog
          key={`${profile}/${retiring.kind}/${retiring.name}`}
          kind={retiring.kind}
          name={retiring.name}
          onClose={() => setRetiring(null)}
        />
      )}
      <AppShell.Footer>
        <StatusBar onOutbox={() => go("outbox")} />
      </AppShell.Footer>
      <Spotlight
        actions={actions}
        query={query}
        onQueryChange={setQuery}
        limit={30}
        shortcut="mod + K"
        tagsToIgnore={[]}
        nothingFound="Nothing found"
        highlightQuery
        searchProps={{
          leftSection: <IconSearch size={18} />,
          placeholder: "Jump to a page, resource or action…",
        }}
      />
    </AppShell>
  );
}
