/**
 * The row state machine (pure). A row moves forward only:
 *
 *   queued ─▶ submitted ─▶ in-progress ─▶ completed | failed | canceled
 *      └──────────────────────────────────▶ rejected | error
 *
 * `completed`, `failed`, `canceled`, `rejected` and `error` are terminal: only an operator retry (a new
 * attempt) leaves them. `rejected` and `error` (a run giving up) are entered from `queued` only: a row
 * that reached a payment's state never goes back to "not paid" or "unknown". One exception keeps the ledger in charge (docs/design.md §3.3): a row in `error`
 * (we gave up without knowing the outcome) may still learn from the service that its payment exists,
 * and then moves to that payment's state. `invalid` rows never enter the pipeline; they are recorded
 * for the result file only.
 */
import type { PaymentStatus } from "../payouts-api/wire-types.js";

export const ROW_STATES = [
  "queued",
  "submitted",
  "in-progress",
  "completed",
  "failed",
  "canceled",
  "rejected",
  "error",
] as const;
export type RowState = (typeof ROW_STATES)[number];

/** States shown in a result file: every pipeline state, plus `invalid` for rows that failed validation. */
export type ResultState = RowState | "invalid";

export const TERMINAL_ROW_STATES: readonly RowState[] = [
  "completed",
  "failed",
  "canceled",
  "rejected",
  "error",
];

/**
 * States a run of the payment job writes when it gives up on an attempt. They may only replace
 * `queued`: once reconciliation (or an adoption) moved a row to a payment's state, a late `error` or
 * `rejected` from a run that timed out would hide a payment that exists (issue 13, point 3).
 */
export const GIVE_UP_ROW_STATES: readonly RowState[] = ["rejected", "error"];

/** States an operator retry may start a new attempt from (never in-flight or paid rows). */
export const RETRYABLE_ROW_STATES: readonly RowState[] = ["failed", "canceled", "rejected", "error"];

const RANK: Readonly<Record<RowState, number>> = {
  queued: 0,
  submitted: 1,
  "in-progress": 2,
  completed: 3,
  failed: 3,
  canceled: 3,
  rejected: 3,
  error: 3,
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

/** Whether a row may move from `from` to `to` (the Lua script in redis-scripts.ts applies the same rule). */
export function canTransition(from: RowState, to: RowState): boolean {
  if (from === to) return false;
  if (from === "error") return ADOPTABLE_FROM_ERROR.includes(to);
  if (GIVE_UP_ROW_STATES.includes(to)) return from === "queued";
  return RANK[to] > RANK[from];
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

/** Lua table literal of the ranks, so the script and this module cannot disagree. */
export function luaRankTable(): string {
  return `{${ROW_STATES.map((s) => `["${s}"]=${RANK[s]}`).join(",")}}`;
}

export function luaGiveUpTable(): string {
  return `{${GIVE_UP_ROW_STATES.map((s) => `["${s}"]=true`).join(",")}}`;
}

export function luaAdoptableFromErrorTable(): string {
  return `{${ADOPTABLE_FROM_ERROR.map((s) => `["${s}"]=true`).join(",")}}`;
}
