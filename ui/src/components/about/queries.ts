// About, diagnostics and updates over the typed IPC (kept beside their components).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { UpdateSettingsInput, UpdateStatus } from "../../ipc/bindings";
import { call } from "../../ipc/client";
import { commandInvalidates, invalidate } from "../../ipc/invalidation";
import { aboutKeys } from "../../ipc/keys";

export const useAppInfo = () =>
  useQuery({ queryKey: aboutKeys.info, queryFn: () => call("app_info", {}) });

export const useUpdateSettings = () =>
  useQuery({ queryKey: aboutKeys.settings, queryFn: () => call("update_settings", {}) });

const busy = (s: UpdateStatus | undefined) =>
  s?.state === "checking" || s?.state === "downloading" || s?.state === "installing";

/** Polled quickly while a check or a download is under way (progress), slowly otherwise. */
export const useUpdateStatus = () =>
  useQuery({
    queryKey: aboutKeys.status,
    queryFn: () => call("update_status", {}),
    refetchInterval: (q) => (busy(q.state.data) ? 250 : 30_000),
  });

export function useSaveUpdateSettings() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: UpdateSettingsInput) => call("save_update_settings", { input }),
    onSuccess: (view) => client.setQueryData(aboutKeys.settings, view),
  });
}

function useUpdateStep(step: "check_update" | "download_update") {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => call(step, {}),
    onSuccess: (status) => client.setQueryData(aboutKeys.status, status),
  });
}

export const useCheckUpdate = () => useUpdateStep("check_update");
export const useDownloadUpdate = () => useUpdateStep("download_update");

export function useInstallUpdate() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => call("install_update", {}),
    onSettled: () => invalidate(client, commandInvalidates.install_update()),
  });
}
