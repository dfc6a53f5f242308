/** Who submits when no person is logged in: the shell user of `payouts submit`, or the worker's folders. */
import { userInfo } from "node:os";
import { SYSTEM_IDENTITIES } from "./rules.js";

/**
 * `cli:<os user>`: who a command acts as (the submitter of `payouts submit`, the actor of every
 * command's audit entry through src/gate's cliCaller); never able to approve. The account the process
 * runs as, not $USER (which anyone can set); the environment's name only where the uid has no passwd
 * entry.
 */
export function cliIdentity(): string {
  let name = process.env.USER ?? process.env.USERNAME ?? "";
  try {
    name = userInfo().username || name;
  } catch {
    // No passwd entry for this uid (containers): the environment's name, else "unknown".
  }
  return SYSTEM_IDENTITIES.cli(name);
}
