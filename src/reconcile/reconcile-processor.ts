/**
 * What reconciliation does with a payment the service showed (a page of the batch's payments, or the
 * odd `GET /payments/{id}`), independent of how it was read: find its row from the payment's own
 * metadata (the ledger names its batch, row and attempt: docs/design.md §3.3), and move the row to
 * follow it. Every step is safe to repeat and to run in any order:
 *
 *   - states only move forward (the row's Lua script refuses anything else), except that a row in a
 *     final payment state follows its own payment to another final state on a newer snapshot: a
 *     completed payment later reported failed or canceled makes the row `returned`;
 *   - a snapshot whose `updatedAt` is older than the one the row holds changes nothing (`outdated`);
 *   - a payment of another attempt of the row (an operator retry started since) changes nothing;
 *   - a row that has no payment yet (the worker has not recorded its create response) adopts it.
 */
import {
  type BatchStore,
  isTerminalRowState,
  normalisedPaymentTime,
  type RowChangeOutcome,
  type RowHead,
  rowStateFollowing,
} from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import { PayoutsApiNotFoundError, type PayoutsClient } from "../payouts-api/index.js";
import { METADATA_VALUE_MAX, type Payment } from "../payouts-api/wire-types.js";
import { rowMetadataValue } from "../row-identity/index.js";

/** A row whose completed payment the service now reports failed or canceled (it became `returned`). */
export interface ReturnedRow {
  batchId: string;
  rowKey: string;
  paymentId: string;
  /** The payment's status now: `failed` or `canceled`. */
  paymentStatus: Payment["status"];
  /** When the service says it happened: the payment's `updatedAt`. */
  returnedAt: string;
  /** The service's reason, when it gives one. */
  reason?: { code: string; message: string } | undefined;
}

export interface ReconcileHooks {
  /** Called (not awaited) after any row change this module makes, e.g. to rewrite the result file. */
  onRowsChanged?: (batchId: string) => void | Promise<void>;
  /** Called once per batch, when every valid row is terminal and the batch was marked finished. */
  onBatchFinished?: (batchId: string) => void | Promise<void>;
  /** Called (not awaited) once per row that became `returned` (its notification, metrics). */
  onRowReturned?: (returned: ReturnedRow) => void | Promise<void>;
}

export interface ReconcileProcessorOptions extends ReconcileHooks {
  store: BatchStore;
  client: PayoutsClient;
  logger?: LogSink;
  now?: () => number;
  /**
   * How long a batch's "is every row final?" check waits after a row turned final, gathering the
   * rows that turn final meanwhile into the same check. Default {@link DEFAULT_FINISH_CHECK_DELAY_MS}.
   */
  finishCheckDelayMs?: number;
  /**
   * How long a finished batch stays watched for returns (ms; 0: not at all), and how often it is
   * looked at meanwhile. Default: not watched (the reconcile service passes the settings).
   */
  watch?: { forMs: number; everyMs: number } | undefined;
}

/**
 * Reading a batch's progress costs three Redis reads; at a thousand rows a second turning final that
 * was three reads per row. One check per batch per this many ms (always one after the last row that
 * turned final) tells the same, a moment later; a process that stops before its check leaves the
 * batch to the sweep, which finishes batches whose rows are all final.
 */
export const DEFAULT_FINISH_CHECK_DELAY_MS = 200;

export type ReconcileResult =
  /** The row changed. */
  | { outcome: "updated"; batchId: string; rowKey: string; state: string }
  /** The row already shows this snapshot, or a newer one, or a later state. */
  | { outcome: "unchanged"; batchId: string; rowKey: string; reason: RowChangeOutcome | "same" }
  /** The payment names no batch of ours (made outside this tool). */
  | { outcome: "not-ours"; paymentId: string }
  /** The payment names a batch or row this Redis does not hold (lost state: `payouts recover`). */
  | { outcome: "unknown-row"; paymentId: string; batchId: string }
  /** The row is on another attempt, or holds another payment: this one is not its payment any more. */
  | { outcome: "other-payment"; paymentId: string; batchId: string; rowKey: string }
  /** The service does not know the payment. */
  | { outcome: "not-found"; paymentId: string };

const FAILURE_CODES: Partial<Record<Payment["status"], { code: string; message: string }>> = {
  failed: { code: "PAYMENT_FAILED", message: "the Payouts Service reports the payment failed" },
  canceled: { code: "PAYMENT_CANCELED", message: "the payment was canceled on the Payouts Service" },
};

/** The code a `returned` row carries (docs/ledger.md). */
export const PAYMENT_RETURNED = "PAYMENT_RETURNED";

/** The row's error code and message for a payment in `status`, given the row state it leads to. */
function outcomeText(payment: Payment, target: string): { code: string; message: string } | undefined {
  const reason = payment.failureReason
    ? ` (${payment.failureReason.code}: ${payment.failureReason.message})`
    : "";
  if (target === "returned") {
    return {
      code: PAYMENT_RETURNED,
      message: `the payment completed, then the Payouts Service reported it ${payment.status} at ${payment.updatedAt}${reason}; the payee was not paid`,
    };
  }
  const failure = FAILURE_CODES[payment.status];
  return failure ? { code: failure.code, message: `${failure.message}${reason}` } : undefined;
}

/** A row change refused because the row moved meanwhile is tried again with a fresh read, this often. */
const MAX_REREADS = 2;

/**
 * Applies payments to their rows and finishes batches. Kept as one closure on purpose: every step
 * (apply, re-read on a race, the hooks, the finish check) shares the store, the hooks and the
 * coalescing of finish checks, and is reached only through the few functions it returns.
 */
export function createReconcileProcessor(options: ReconcileProcessorOptions) {
  const { store, client, logger } = options;
  const finishCheckDelayMs = options.finishCheckDelayMs ?? DEFAULT_FINISH_CHECK_DELAY_MS;
  /** Per batch: a check waiting to start, and whether a row turned final during the running one. */
  const finishChecks = new Map<string, { timer?: NodeJS.Timeout; running: boolean; again: boolean }>();
  const runningChecks = new Set<Promise<void>>();
  /** Follow-ups of batches this process finished (onBatchFinished), still running. */
  const runningHooks = new Set<Promise<void>>();
  let finishChecksClosed = false;

  /** Runs a hook without waiting for it; `tracked`: the stop waits for it too (runningHooks). */
  function notify(
    hook: ((batchId: string) => void | Promise<void>) | undefined,
    batchId: string,
    tracked = false,
  ): void {
    if (!hook) return;
    const running = Promise.resolve()
      .then(() => hook(batchId))
      .catch((err: unknown) => {
        logger?.error({ batchId, err }, "reconcile hook failed");
      });
    if (!tracked) return;
    runningHooks.add(running);
    void running.finally(() => runningHooks.delete(running));
  }

  /**
   * The rows these payments' `payouts_row` values name, in one read; a value that was shortened (a
   * very long row key) is looked up among the batch's rows, the rare slow path.
   */
  async function findRows(batchId: string, rowValues: readonly string[]): Promise<(RowHead | undefined)[]> {
    const heads = await store.rowHeads(batchId, rowValues);
    for (const [i, head] of heads.entries()) {
      const value = rowValues[i]!;
      if (head || value.length < METADATA_VALUE_MAX) continue;
      const rowKeys = await store.rowKeys(batchId);
      const rowKey = rowKeys.find((k) => rowMetadataValue(k) === value);
      if (rowKey) heads[i] = (await store.rowHeads(batchId, [rowKey]))[0];
    }
    return heads;
  }

  /**
   * Marks the batch finished once every valid row is terminal (and the submission is complete).
   * Returns true when this call marked it.
   */
  async function finishIfDone(batchId: string): Promise<boolean> {
    const progress = await store.progress(batchId);
    if (!progress || progress.batch.finishedAt) return false;
    const { batch } = progress;
    if (!batch.rowsRecorded || !batch.enqueueComplete || progress.done < batch.rowCount) return false;
    if (!(await store.markBatchFinished(batchId))) return false;
    logger?.info({ batchId, rows: batch.rowCount }, "batch finished: every row is final");
    const watch = options.watch;
    if (watch && watch.forMs > 0) {
      // Returns come days after a payment completed: the finished batch stays watched, a page read a
      // day, for the window (sweep.ts).
      const now = options.now?.() ?? Date.now();
      await store.watchBatch(batchId, now + Math.min(watch.everyMs, watch.forMs), now + watch.forMs);
    }
    notify(options.onRowsChanged, batchId);
    notify(options.onBatchFinished, batchId, true);
    return true;
  }

  /**
   * A row of the batch turned final: check (soon) whether the whole batch is. Requests while a check
   * waits join it (it has not read yet); a request while a check runs (it may have read before the
   * change) gets one more check after it, so the last row's change is always seen by a check.
   */
  function requestFinishCheck(batchId: string): void {
    if (finishChecksClosed) return;
    let slot = finishChecks.get(batchId);
    if (!slot) {
      slot = { running: false, again: false };
      finishChecks.set(batchId, slot);
    }
    if (slot.running) {
      slot.again = true;
      return;
    }
    if (slot.timer) return;
    const current = slot;
    current.timer = setTimeout(() => {
      current.timer = undefined;
      current.running = true;
      current.again = false;
      const check = runFinishCheck(batchId).finally(() => {
        runningChecks.delete(check);
        current.running = false;
        if (current.again) requestFinishCheck(batchId);
        else if (!current.timer) finishChecks.delete(batchId);
      });
      runningChecks.add(check);
    }, finishCheckDelayMs);
    // A pending check never holds the process open; the sweep finishes what a stopped process did not.
    current.timer.unref();
  }

  async function runFinishCheck(batchId: string): Promise<void> {
    try {
      await finishIfDone(batchId);
    } catch (err) {
      logger?.error({ batchId, err }, "batch finish check failed");
    }
  }

  /**
   * On stop, after the last job and before the connections close: the checks still waiting run now, so
   * a batch whose last row just turned final is finished by this process (not left to the sweep), and
   * no check starts later on a closed connection (the demo used to log "Connection is closed" there).
   */
  async function flushFinishChecks(): Promise<void> {
    finishChecksClosed = true;
    await Promise.all(runningChecks);
    const waiting = [...finishChecks].filter(([, slot]) => slot.timer !== undefined || slot.again);
    for (const [, slot] of waiting) clearTimeout(slot.timer);
    finishChecks.clear();
    await Promise.all(waiting.map(([batchId]) => runFinishCheck(batchId)));
    // A finished batch's follow-up (its final result file, ledger audit and notification) reads
    // Redis and the service too: it ends before their connections close.
    await Promise.all(runningHooks);
  }

  /** Applies one payment snapshot to its row (read before, or now). */
  async function applyTo(payment: Payment, known: RowHead | undefined | "read"): Promise<ReconcileResult> {
    const batchId = payment.metadata?.payouts_batch;
    const rowValue = payment.metadata?.payouts_row;
    const attempt = Number(payment.metadata?.payouts_attempt);
    if (!batchId || !rowValue || !Number.isInteger(attempt) || attempt < 1) {
      return { outcome: "not-ours", paymentId: payment.id };
    }
    const found = known === "read" ? (await findRows(batchId, [rowValue]))[0] : known;
    if (!found) {
      logger?.warn(
        { paymentId: payment.id, batchId },
        "a payment names a row this Redis does not hold; `payouts recover` rebuilds lost batches",
      );
      return { outcome: "unknown-row", paymentId: payment.id, batchId };
    }
    let row: RowHead = found;
    const updatedAt = normalisedPaymentTime(payment.updatedAt);
    for (let rereads = 0; ; rereads++) {
      if (row.attempt !== attempt || (row.paymentId !== undefined && row.paymentId !== payment.id)) {
        return { outcome: "other-payment", paymentId: payment.id, batchId, rowKey: row.rowKey };
      }
      const target = rowStateFollowing(row.state, payment.status);
      if (row.paymentId === payment.id && row.state === target && row.paymentUpdatedAt === updatedAt) {
        return { outcome: "unchanged", batchId, rowKey: row.rowKey, reason: "same" };
      }
      const outcome = outcomeText(payment, target);
      const returned = target === "returned" && row.state !== "returned";
      const result = await store.changeRow(batchId, row.rowKey, {
        expectedAttempt: attempt,
        to: target,
        fields: {
          paymentId: payment.id,
          paymentStatus: payment.status,
          debitUsd: payment.fx?.debitAmount ?? null,
          fxRate: payment.fx?.usdToForeignRate ?? null,
          fees: payment.fees,
          paymentUpdatedAt: updatedAt,
          paymentCreatedAt: normalisedPaymentTime(payment.createdAt),
          errorCode: outcome?.code ?? null,
          errorMessage: outcome?.message ?? null,
        },
        ...(returned
          ? {
              note: `returned: payment ${payment.status} at ${updatedAt}${payment.failureReason ? ` (${payment.failureReason.code}: ${payment.failureReason.message})` : ""}`,
            }
          : row.state !== target
            ? { note: `reconciled: payment ${payment.status}` }
            : {}),
      });
      if (result.outcome === "refused" && rereads < MAX_REREADS) {
        // The row moved since it was read (a final state this snapshot follows differently): read again.
        const fresh = (await store.rowHeads(batchId, [row.rowKey]))[0];
        if (!fresh) return { outcome: "unknown-row", paymentId: payment.id, batchId };
        row = fresh;
        continue;
      }
      if (result.outcome !== "ok") {
        return { outcome: "unchanged", batchId, rowKey: row.rowKey, reason: result.outcome };
      }
      notify(options.onRowsChanged, batchId);
      if (returned && options.onRowReturned) {
        const event: ReturnedRow = {
          batchId,
          rowKey: row.rowKey,
          paymentId: payment.id,
          paymentStatus: payment.status,
          returnedAt: updatedAt,
          reason: payment.failureReason,
        };
        const hook = options.onRowReturned;
        Promise.resolve()
          .then(() => hook(event))
          .catch((err: unknown) => {
            logger?.error({ batchId, err }, "returned-row hook failed");
          });
      }
      if (isTerminalRowState(target)) requestFinishCheck(batchId);
      return { outcome: "updated", batchId, rowKey: row.rowKey, state: target };
    }
  }

  /** Applies one payment snapshot to its row. */
  function applyPayment(payment: Payment): Promise<ReconcileResult> {
    return applyTo(payment, "read");
  }

  /**
   * Applies every payment of a page (any batches): the rows they name are read together, one round
   * trip per batch, then each payment is applied to its row.
   */
  async function applyPayments(payments: readonly Payment[]): Promise<ReconcileResult[]> {
    const byBatch = new Map<string, { at: number[]; values: string[] }>();
    payments.forEach((p, i) => {
      const batchId = p.metadata?.payouts_batch;
      const value = p.metadata?.payouts_row;
      if (!batchId || !value) return;
      let group = byBatch.get(batchId);
      if (!group) {
        group = { at: [], values: [] };
        byBatch.set(batchId, group);
      }
      group.at.push(i);
      group.values.push(value);
    });
    const rows: (RowHead | undefined | "read")[] = payments.map(() => "read");
    await Promise.all(
      [...byBatch].map(async ([batchId, group]) => {
        const heads = await findRows(batchId, group.values);
        group.at.forEach((at, j) => {
          rows[at] = heads[j];
        });
      }),
    );
    return Promise.all(payments.map((p, i) => applyTo(p, rows[i])));
  }

  /** Fetches the payment's current state and applies it. API faults are thrown (the job retries). */
  async function reconcilePayment(paymentId: string): Promise<ReconcileResult> {
    let payment: Payment;
    try {
      payment = await client.payments.get(paymentId);
    } catch (err) {
      if (err instanceof PayoutsApiNotFoundError) return { outcome: "not-found", paymentId };
      throw err;
    }
    return applyPayment(payment);
  }

  return { reconcilePayment, applyPayment, applyPayments, finishIfDone, flushFinishChecks };
}

export type ReconcileProcessor = ReturnType<typeof createReconcileProcessor>;
