/** The row must not be sent: it ends `rejected` (or `error` when `state` says so) with this code. */
import { PayoutsError } from "../errors/index.js";
export class RowOutcomeError extends PayoutsError {
  override readonly name = "RowOutcomeError";
  constructor(
    code: string,
    message: string,
    readonly state: "rejected" | "error" = "rejected",
  ) {
    super(code, message, { kind: state === "rejected" ? "invalid-input" : "unavailable" });
  }
}
