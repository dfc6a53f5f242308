/** The row must not be sent: it ends `rejected` (or `error` when `state` says so) with this code. */
export class RowOutcomeError extends Error {
  override readonly name = "RowOutcomeError";
  constructor(
    readonly code: string,
    message: string,
    readonly state: "rejected" | "error" = "rejected",
  ) {
    super(message);
  }
}
