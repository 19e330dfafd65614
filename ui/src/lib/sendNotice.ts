// What a person hears after asking to send now (Retry now, Sync): sent at once, or why not
// yet — the control plane does not answer, or the write belongs to another control plane.
import { notifications } from "@mantine/notifications";
import type { SyncStatus } from "../ipc/bindings";
import { useActiveProfile, useSyncStatus } from "../ipc/queries";

/** The sentence for a send requested for `profile`, given the active profile's status. */
export function sendNotice(
  profile: string,
  active: string | undefined,
  status: SyncStatus | undefined,
): { title: string; message: string; color: string } {
  if (profile !== active)
    return {
      title: "Waits for its control plane",
      message: `Changes for ${profile} are sent while ${profile} is the active control plane. Switch to it to send them.`,
      color: "yellow",
    };
  if (status?.profile === profile && status.online === false)
    return {
      title: `${profile} is unreachable`,
      message: `${status.offline_reason ?? "It does not answer"}. Nothing is lost: it is sent by itself when ${profile} answers.`,
      color: "yellow",
    };
  return { title: "Sending now", message: `Sending to ${profile}…`, color: "blue" };
}

/** Shows `sendNotice` as a notification; returns the function to call after the click. */
export function useSendNotice(): (profile?: string) => void {
  const active = useActiveProfile();
  const status = useSyncStatus();
  return (profile) => {
    const target = profile ?? active;
    if (!target) return;
    notifications.show({ ...sendNotice(target, active, status.data), autoClose: 6000 });
  };
}
