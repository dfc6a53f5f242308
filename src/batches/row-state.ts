/**
 * The row state machine (pure). A row moves forward only:
 *
 *   queued ─▶ submitted ─▶ in-progress ─▶ completed | failed | canceled
 *      └──────────────────────────────────▶ rejected | error
 *
 * `completed`, `failed`, `canceled`, `returned`, `rejected` and `error` are terminal: only an operator
 * retry (a new attempt) leaves them for a new payment. `rejected` and `error` (a run giving up) are
 * entered from `queued` only: a row that reached a payment's state never goes back to "not paid" or
 * "unknown". Two exceptions keep the ledger in charge (docs/design.md §3.3, §3.5):
 *
 * - a row in `error` (we gave up without knowing the outcome) may still learn from the service that
 *   its payment exists, and then moves to that payment's state;
 * - a row whose payment reached a final status follows that same payment wherever the service takes
 *   it later, when the service's snapshot is newer than the one the row holds ({@link canFollowPayment}):
 *   a `completed` payment reported `failed` or `canceled` makes the row `returned` (the payee was paid,
 *   then the money came back: an ACH return), and a failed, canceled or returned payment reported
 *   `completed` again makes the row `completed`.
 *
 * `canceled-unsent` is entered from `queued` only, when an operator cancels the batch before the row
 * was ever sent on its attempt (no request left for it, so no payment can exist): terminal, no payment.
 *
 * `invalid` rows never enter the pipeline; they are recorded for the result file only.
 */
import type { PaymentStatus } from "../payouts-api/wire-types.js";

export const ROW_STATES = [
  "queued",
  "submitted",
  "in-progress",
  "completed",
  "failed",
  "canceled",
  "returned",
  "rejected",
  "error",
  "canceled-unsent",
] as const;
export type RowState = (typeof ROW_STATES)[number];

/** States shown in a result file: every pipeline state, plus `invalid` for rows that failed validation. */
export type ResultState = RowState | "invalid";

export const TERMINAL_ROW_STATES: readonly RowState[] = [
  "completed",
  "failed",
  "canceled",
  "returned",
  "rejected",
  "error",
  "canceled-unsent",
];

/**
 * What a result file's `status` says for a row state: a row canceled before it was sent reads
 * `canceled` (its error code BATCH_CANCELED and its empty payment id say it was never sent).
 */
export function resultStatusOf(state: RowState): Exclude<RowState, "canceled-unsent"> {
  return state === "canceled-unsent" ? "canceled" : state;
}

/**
 * The states of a row that records its payment (the row scripts set the state and the payment id
 * together, and a new attempt clears both): what an audit expects the service to hold a payment for.
 */
export const PAYMENT_ROW_STATES: readonly RowState[] = ROW_STATES.filter(
  (s) => s !== "queued" && s !== "rejected" && s !== "error" && s !== "canceled-unsent",
);

/**
 * States a run of the payment job writes when it gives up on an attempt (and `canceled-unsent`, an
 * operator's cancel of a row never sent). They may only replace `queued`: once reconciliation (or an
 * adoption) moved a row to a payment's state, a late `error` or `rejected` from a run that timed out
 * would hide a payment that exists.
 */
export const GIVE_UP_ROW_STATES: readonly RowState[] = ["rejected", "error", "canceled-unsent"];

/**
 * States an operator retry may start a new attempt from (never in-flight or paid rows). A `returned`
 * row was paid and the money came back: it is unpaid now, and paying it again is an operator's call.
 */
export const RETRYABLE_ROW_STATES: readonly RowState[] = [
  "failed",
  "canceled",
  "returned",
  "rejected",
  "error",
  "canceled-unsent",
];

const RANK: Readonly<Record<RowState, number>> = {
  queued: 0,
  submitted: 1,
  "in-progress": 2,
  completed: 3,
  failed: 3,
  canceled: 3,
  returned: 3,
  rejected: 3,
  error: 3,
  "canceled-unsent": 3,
};

/** The payment states a row in `error` may still adopt when the service shows its payment. */
const ADOPTABLE_FROM_ERROR: readonly RowState[] = [
  "submitted",
  "in-progress",
  "completed",
  "failed",
  "canceled",
];

export function isRowState(value: string): value is RowState {
  return (ROW_STATES as readonly string[]).includes(value);
}

export function isTerminalRowState(state: RowState): boolean {
  return TERMINAL_ROW_STATES.includes(state);
}

/**
 * Where a row whose payment reached a final status may follow that payment, given a newer snapshot of
 * the same payment: `returned` only from `completed` (a payment that never completed simply failed),
 * and never from `returned` back to `failed` or `canceled` (it stays `returned`: it was paid once).
 */
const FOLLOWS: Readonly<Partial<Record<RowState, readonly RowState[]>>> = {
  completed: ["returned"],
  failed: ["completed", "canceled"],
  canceled: ["completed", "failed"],
  returned: ["completed"],
};

/**
 * Whether a row may move from `from` to `to` on its own (forward only; lua/transition-row.lua applies
 * the same rule). Moves between final payment states are not forward moves:
 * see {@link canFollowPayment}.
 */
export function canTransition(from: RowState, to: RowState): boolean {
  if (from === to) return false;
  if (from === "error") return ADOPTABLE_FROM_ERROR.includes(to);
  if (GIVE_UP_ROW_STATES.includes(to)) return from === "queued";
  if (FOLLOWS[from] !== undefined || to === "returned") return false;
  return RANK[to] > RANK[from];
}

/**
 * Whether a row in a final payment state may follow its own payment to `to`: only with a snapshot of
 * that same payment newer than the one the row holds (the Lua script checks both).
 */
export function canFollowPayment(from: RowState, to: RowState): boolean {
  return FOLLOWS[from]?.includes(to) === true;
}

/**
 * The row state for a payment's status, given the row's current state: a `completed` (or already
 * `returned`) row whose payment is now `failed` or `canceled` is `returned`; otherwise as
 * {@link rowStateForPayment}.
 */
export function rowStateFollowing(current: RowState, status: PaymentStatus): RowState {
  if ((status === "failed" || status === "canceled") && (current === "completed" || current === "returned")) {
    return "returned";
  }
  return rowStateForPayment(status);
}

/** The row state that reflects a payment's status on the service. */
export function rowStateForPayment(status: PaymentStatus): RowState {
  switch (status) {
    case "scheduled":
      return "submitted";
    case "in-progress":
      return "in-progress";
    case "completed":
      return "completed";
    case "failed":
      return "failed";
    case "canceled":
      return "canceled";
  }
}

/**
 * The tables the row scripts (lua/transition-row.lua, lua/start-new-attempt.lua) decide by, from this
 * module, so the scripts and the functions above cannot disagree.
 */
export function rowStateTables() {
  return {
    RANK,
    TERMINAL: new Set(TERMINAL_ROW_STATES),
    GIVE_UP: new Set(GIVE_UP_ROW_STATES),
    ADOPTABLE_FROM_ERROR: new Set(ADOPTABLE_FROM_ERROR),
    /** `FOLLOW[from][to]`: {@link canFollowPayment}. */
    FOLLOW: Object.fromEntries(Object.entries(FOLLOWS).map(([from, tos]) => [from, new Set(tos)])),
    /** The states of a row whose payment reached a final status: those that follow their payment. */
    PAYMENT_FINAL: new Set(Object.keys(FOLLOWS)),
    RETRYABLE: new Set(RETRYABLE_ROW_STATES),
  };
}
