/**
 * Which reads a batch's due marks need (pure: no I/O). Each marked row is placed in time by its
 * payment's `createdAt` (the service's clock, kept on the row since the payment was recorded), and
 * the placed rows are grouped into creation windows: one `GET /payments` page walk per window, about
 * ceil(payments in it / 50) reads, instead of a `GET /payments/{id}` per row. Two neighbouring rows
 * share a window when the batch created few enough payments between them that reading those costs
 * less than starting another window (counted from the batch's payments created per second).
 *
 * A row that cannot be placed (its payment is not recorded on it yet, or was recorded by a version
 * that kept no creation time) is read alone by the payment id its delivery named: the odd row.
 * A mark whose news the row already holds (the row's snapshot of that payment is at least as new as
 * the change the delivery announced), or that names a payment which cannot change the row (another
 * attempt's), costs no read.
 */
import type { RowHead } from "../batches/index.js";
import type { DueMark } from "./look-index.js";

/** A page holds at most this many payments (the spec's page size). */
export const PAGE_SIZE = 50;

/**
 * Two placed rows share a window when at most this many payments are estimated between them: reading
 * them costs at most half a page, where a new window costs at least one read.
 */
export const MERGE_GAP_PAYMENTS = PAGE_SIZE / 2;

/** Gaps longer than this (s) are never merged, so the per-second counts read stay bounded per mark. */
export const MAX_MERGE_GAP_SECONDS = 30;

/** A window is split (at a row boundary) once it holds about this many payments, to read in parallel. */
export const WINDOW_SPLIT_PAYMENTS = 20 * PAGE_SIZE;

export interface PlacedRow {
  mark: DueMark;
  rowKey: string;
  paymentId: string;
  createdMs: number;
}

export interface LookPlan {
  /** Rows placed in time: read through creation windows. */
  placed: PlacedRow[];
  /** Payments read one by one (rows that cannot be placed). */
  singles: { mark: DueMark; paymentId: string }[];
  /** Marks that need no read at all. */
  settled: DueMark[];
}

export interface CreationWindow {
  /** Creation times (ms), inclusive. */
  fromMs: number;
  toMs: number;
  /** The rows it was made for. */
  rows: PlacedRow[];
}

/** Sorts each due mark into a window read, a read by id, or no read (see the module comment). */
export function planLook(marks: readonly DueMark[], heads: readonly (RowHead | undefined)[]): LookPlan {
  const plan: LookPlan = { placed: [], singles: [], settled: [] };
  marks.forEach((mark, i) => {
    const head = heads[i];
    const hint = mark.hint;
    if (!head) {
      // No row by that name (a shortened long row key, or a batch this Redis lost): the payment read
      // alone resolves it through its metadata, or says it is not ours.
      if (hint) plan.singles.push({ mark, paymentId: hint.paymentId });
      else plan.settled.push(mark);
      return;
    }
    if (head.paymentId) {
      const news =
        hint !== undefined &&
        hint.paymentId === head.paymentId &&
        hint.occurredAtMs > 0 &&
        head.paymentUpdatedAt !== undefined &&
        Date.parse(head.paymentUpdatedAt) >= hint.occurredAtMs;
      if (news) {
        plan.settled.push(mark);
        return;
      }
      const createdMs = head.paymentCreatedAt === undefined ? Number.NaN : Date.parse(head.paymentCreatedAt);
      if (Number.isFinite(createdMs)) {
        plan.placed.push({ mark, rowKey: head.rowKey, paymentId: head.paymentId, createdMs });
      } else {
        plan.singles.push({ mark, paymentId: head.paymentId });
      }
      return;
    }
    // The row does not know its payment yet: the delivery's payment, if it is this attempt's, is
    // adopted through its metadata. Another attempt's payment cannot change the row.
    if (hint && (hint.attempt === 0 || hint.attempt === head.attempt)) {
      plan.singles.push({ mark, paymentId: hint.paymentId });
    } else {
      plan.settled.push(mark);
    }
  });
  plan.placed.sort((a, b) => a.createdMs - b.createdMs);
  return plan;
}

/**
 * The seconds whose payment counts decide the grouping of `placed` (sorted by creation): those of
 * every gap short enough to be merged.
 */
export function secondsToCount(placed: readonly PlacedRow[]): number[] {
  const seconds = new Set<number>();
  for (let i = 1; i < placed.length; i++) {
    const a = Math.floor(placed[i - 1]!.createdMs / 1000);
    const b = Math.floor(placed[i]!.createdMs / 1000);
    if (b - a > MAX_MERGE_GAP_SECONDS) continue;
    for (let s = a; s <= b; s++) seconds.add(s);
  }
  return [...seconds];
}

/**
 * Payments estimated strictly between two creation times, from per-second counts (spread evenly
 * within a second); Infinity for a gap too long to have been counted.
 */
export function paymentsBetween(
  fromMs: number,
  toMs: number,
  perSecond: ReadonlyMap<number, number>,
): number {
  if (toMs <= fromMs) return 0;
  const a = Math.floor(fromMs / 1000);
  const b = Math.floor(toMs / 1000);
  if (b - a > MAX_MERGE_GAP_SECONDS) return Number.POSITIVE_INFINITY;
  const count = (s: number) => perSecond.get(s) ?? 0;
  if (a === b) return (count(a) * (toMs - fromMs)) / 1000;
  let total = (count(a) * (1000 - (fromMs - a * 1000))) / 1000 + (count(b) * (toMs - b * 1000)) / 1000;
  for (let s = a + 1; s < b; s++) total += count(s);
  return total;
}

/**
 * Groups placed rows (sorted by creation) into creation windows: a row joins the window before it when
 * few payments lie between them, and a window is split at a row boundary (never inside one
 * millisecond) once it holds about {@link WINDOW_SPLIT_PAYMENTS}, so large windows read in parallel.
 */
export function creationWindows(
  placed: readonly PlacedRow[],
  perSecond: ReadonlyMap<number, number>,
): CreationWindow[] {
  const windows: CreationWindow[] = [];
  let current: CreationWindow | undefined;
  let inCurrent = 0;
  for (const row of placed) {
    if (current) {
      const gap = paymentsBetween(current.toMs, row.createdMs, perSecond);
      const sameMs = row.createdMs === current.toMs;
      if (sameMs || (gap <= MERGE_GAP_PAYMENTS && inCurrent + gap < WINDOW_SPLIT_PAYMENTS)) {
        current.toMs = row.createdMs;
        current.rows.push(row);
        inCurrent += gap + 1;
        continue;
      }
    }
    current = { fromMs: row.createdMs, toMs: row.createdMs, rows: [row] };
    inCurrent = 1;
    windows.push(current);
  }
  return windows;
}
