import { useHealth } from "../ipc/queries";

/** What a write needs of the profile's token (docs/security.md, "Roles and tokens"). */
export type Needed = "operator" | "admin";

/**
 * Why the token's role may not make a write that needs `needed` (`what`: "creating an
 * endpoint"), or null when it may — or when the role is not known: a control plane without
 * roles, or one that has not answered yet. Then the write is queued as usual and the control
 * plane decides; the console never refuses on a guess.
 */
export function roleRefusal(
  role: string | null | undefined,
  needed: Needed,
  what: string,
): string | null {
  if (!role || role === "admin" || (needed === "operator" && role === "operator")) {
    return null;
  }
  const who = needed === "admin" ? "an admin token" : "an operator or admin token";
  return `This token's role is ${role}: ${what} needs ${who}.`;
}

/** [`roleRefusal`] for the active profile's token, from its health check. */
export function useRoleRefusal(needed: Needed, what: string): string | null {
  return roleRefusal(useHealth().data?.role, needed, what);
}
