/**
 * Which rows an operator retry touches (pure). Only rows whose last attempt ended without paying
 * (failed, rejected, error, canceled) get a new attempt; every other row the operator named is left
 * alone with the reason, so nothing in flight or paid is ever sent twice (docs/design.md §3.4).
 */
import {
  APPROVAL_EXPIRED,
  APPROVAL_REJECTED,
  REFERENCE_REUSED,
  RETRYABLE_ROW_STATES,
  type RowState,
} from "../batches/index.js";
import { PayoutsError } from "../errors/index.js";

export class RowSpecError extends PayoutsError {
  override readonly name = "RowSpecError";
  constructor(message: string) {
    super("INVALID_ROWS", message, { kind: "usage" });
  }
}

/** Most row numbers one `--rows` value may name (a typo like `1-99999999` must not allocate forever). */
export const MAX_ROWS_IN_SPEC = 1_000_000;

/** `"3,7-9"` → [3, 7, 8, 9] (sorted, unique). Row numbers are the ones the sheet and result file show. */
export function parseRowSpec(spec: string): number[] {
  const rows = new Set<number>();
  for (const raw of spec.split(",")) {
    const part = raw.trim();
    if (part === "") continue;
    const m = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part);
    if (!m) throw new RowSpecError(`"${part}" is not a row number or a range like 7-9`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to < 1) throw new RowSpecError(`"${part}": row numbers start at 1`);
    if (to < from) throw new RowSpecError(`"${part}": a range goes from the lower number to the higher`);
    if (to - from + 1 + rows.size > MAX_ROWS_IN_SPEC) throw new RowSpecError(`"${part}": too many rows`);
    for (let n = from; n <= to; n++) rows.add(n);
  }
  if (rows.size === 0) throw new RowSpecError("no row numbers given");
  return [...rows].sort((a, b) => a - b);
}

/** What the plan needs of a row. */
export interface RetryCandidate {
  rowNumber: number;
  rowKey: string;
  state: RowState;
  attempt: number;
  /** The code the row ended with, when it ended in one. */
  errorCode?: string | undefined;
}

export interface LeftAlone {
  rowNumber: number;
  reason: string;
}

export interface RetryPlan {
  retry: RetryCandidate[];
  leftAlone: LeftAlone[];
}

/** Never retried (see src/batches/adopt-payment.ts, where the code is defined with its message). */
export { REFERENCE_REUSED };

/** Why a row in `state` (ended with `errorCode`) gets no new attempt, or undefined when it may be retried. */
export function whyNotRetryable(state: RowState, errorCode?: string): string | undefined {
  if (errorCode === REFERENCE_REUSED) {
    return "its reference was already used by an earlier payment (see error_message): a new attempt would pay that invoice again; if it really is a new payout, submit it in a new sheet with a new reference";
  }
  if (errorCode === APPROVAL_REJECTED || errorCode === APPROVAL_EXPIRED) {
    return "its batch was not approved (rejected or expired), so no payment may be made for it; submit the sheet again for a new approval";
  }
  if (RETRYABLE_ROW_STATES.includes(state)) return undefined;
  switch (state) {
    case "completed":
      return "already paid (completed): a retry would pay it twice";
    case "queued":
    case "submitted":
    case "in-progress":
      return `in flight (${state}): its payment may still complete; retry it only once it failed`;
    default:
      return `its state (${state}) cannot be retried`;
  }
}

/**
 * Plans a retry. Without `requested`, every retryable row (rows that need nothing are not listed).
 * With it, each requested row is either retried or listed with the reason it was left alone.
 */
export function planRetry(
  rows: readonly RetryCandidate[],
  invalidRowNumbers: ReadonlySet<number>,
  requested?: readonly number[],
): RetryPlan {
  const byNumber = new Map(rows.map((r) => [r.rowNumber, r]));
  const plan: RetryPlan = { retry: [], leftAlone: [] };
  if (requested === undefined) {
    plan.retry = rows.filter((r) => whyNotRetryable(r.state, r.errorCode) === undefined);
    return plan;
  }
  for (const rowNumber of requested) {
    const row = byNumber.get(rowNumber);
    if (!row) {
      plan.leftAlone.push({
        rowNumber,
        reason: invalidRowNumbers.has(rowNumber)
          ? "invalid in the sheet (never submitted): fix it and submit it in a new sheet"
          : "no such row in this batch",
      });
      continue;
    }
    const why = whyNotRetryable(row.state, row.errorCode);
    if (why === undefined) plan.retry.push(row);
    else plan.leftAlone.push({ rowNumber, reason: why });
  }
  return plan;
}
