/** Who submits when no person is logged in: the shell user of `payouts submit`, or the worker's folders. */
import { userInfo } from "node:os";
import { SYSTEM_IDENTITIES } from "./rules.js";

/** `cli:<os user>`: recorded as the submitter of `payouts submit`; never able to approve. */
export function cliIdentity(): string {
  let name = process.env.USER ?? process.env.USERNAME ?? "";
  try {
    name = userInfo().username || name;
  } catch {
    // No passwd entry for this uid (containers): the environment's name, else "unknown".
  }
  return SYSTEM_IDENTITIES.cli(name);
}
