// Typed access to the Rust commands and events. The types come from bindings.ts (generated).
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { markAnswer } from "../lib/launchMarks";
import { CORE_EVENT, type Commands, type CoreEvent, type IpcError } from "./bindings";

export type CommandName = keyof Commands;
export type Args<K extends CommandName> = Commands[K]["args"];
export type Result<K extends CommandName> = Commands[K]["result"];

/** Calls a command; rejects with an `IpcError` (`{code, message, problem}`). */
export async function call<K extends CommandName>(command: K, args: Args<K>): Promise<Result<K>> {
  try {
    const result = await invoke<Result<K>>(command, args as Record<string, unknown>);
    markAnswer();
    return result;
  } catch (error) {
    markAnswer();
    throw toIpcError(error);
  }
}

/** Whatever a rejected invoke carried, as an IpcError. */
export function toIpcError(error: unknown): IpcError {
  if (error && typeof error === "object" && "code" in error && "message" in error) {
    return error as IpcError;
  }
  return { code: "internal", message: String(error), problem: null };
}

export function isIpcError(error: unknown): error is IpcError {
  return !!error && typeof error === "object" && "code" in error && "message" in error;
}

/** Subscribes to the core's events; returns the unsubscribe function. */
export function onCoreEvent(handler: (event: CoreEvent) => void): Promise<UnlistenFn> {
  return listen<CoreEvent>(CORE_EVENT, (event) => handler(event.payload));
}
