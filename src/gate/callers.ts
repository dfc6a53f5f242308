/** The callers of the gate that are not people logged in: the shell, the watched folder, the nightly run. */
import { cliIdentity, SYSTEM_IDENTITIES } from "../approvals/index.js";
import type { GateCaller } from "./gate.js";

/** A CLI command: `cli:<os user>`. */
export function cliCaller(): GateCaller {
  return { actor: { kind: "cli", name: cliIdentity() }, from: "cli" };
}

/** A sheet or result file taken from the inbox. */
export function inboxCaller(): GateCaller {
  return { actor: { kind: "system", name: SYSTEM_IDENTITIES.inbox }, from: "inbox" };
}

/** A sheet taken by the nightly run. */
export function scheduleCaller(): GateCaller {
  return { actor: { kind: "system", name: SYSTEM_IDENTITIES.schedule }, from: "schedule" };
}
