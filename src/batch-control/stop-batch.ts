/**
 * Stopping a batch: pause, resume, cancel (docs/design.md, "Stopping a batch").
 *
 * A pause is one hash per batch (redis-layout.ts `stop`). Two places read it: the feed passes a paused
 * batch over (no new jobs), and the send fence (lua/fence-send.lua in src/batches) refuses, atomically,
 * the first send of any row of a paused batch, so a job already queued sends nothing while the batch is
 * paused. A row already sent on its attempt is in flight: it goes on under its own key until its
 * outcome is known (only that key can tell whether it paid). Nothing is half-sent, and a paused row
 * stays `queued`, so a resume (feed restarted from the start) pays it; no row is ever lost.
 *
 * A cancel pauses first, then marks every row never sent on its attempt `canceled-unsent` (never
 * sent, so no payment can exist) and cancels at the service the payments still `scheduled`. Rows in
 * flight or paid keep their course; once every row is final, the batch finishes as any other (final
 * result file, notification). A canceled batch is never resumed: an operator pays its rows by a
 * retry (through the gate), whose new attempt the cancel does not hold (start-new-attempt.lua releases
 * it, fence-send.lua lets it through).
 */
import type { BatchStore, RowRecord } from "../batches/index.js";
import { adoptPayment, enqueueQueuedRows, type RowEnqueuer, type SubmissionGate } from "../batches/index.js";
import { PayoutsError } from "../errors/index.js";
import { PayoutsApiError, type PayoutsClient } from "../payouts-api/index.js";

/** Who stopped the batch, when and why, as the API, the console and the result file show it. */
export interface BatchStop {
  paused: { by: string; at: string; reason: string; byBreaker: boolean } | null;
  canceled: { by: string; at: string } | null;
}

/** The error code of a row canceled before it was sent. */
export const BATCH_CANCELED = "BATCH_CANCELED";

/** The error code a paused batch's rows not sent yet show in the result file. */
export const BATCH_PAUSED = "BATCH_PAUSED";

/**
 * The rows as the result file shows them while the batch is paused: a row not sent yet (`queued`, no
 * outcome of its own) carries BATCH_PAUSED with who paused it, when and why.
 */
export async function* withPauseShown<R extends Pick<RowRecord, "state" | "errorCode" | "errorMessage">>(
  rows: AsyncIterable<R>,
  paused: NonNullable<BatchStop["paused"]>,
): AsyncGenerator<R> {
  const why = `paused by ${paused.by} at ${paused.at}${paused.reason ? `: ${paused.reason}` : ""}`;
  for await (const row of rows) {
    yield row.state === "queued" && row.errorCode === undefined
      ? { ...row, errorCode: BATCH_PAUSED, errorMessage: why }
      : row;
  }
}

/** The actor name the circuit breaker pauses a batch as. */
export const BREAKER_ACTOR = "system:breaker";

export async function readStop(store: BatchStore, batchId: string): Promise<BatchStop> {
  const h = await store.redis.hgetall(store.keys.stop(batchId));
  return {
    paused: h.paused
      ? {
          by: h.pausedBy ?? "",
          at: h.pausedAt ?? "",
          reason: h.reason ?? "",
          byBreaker: h.pausedBy === BREAKER_ACTOR,
        }
      : null,
    canceled: h.canceled ? { by: h.canceledBy ?? "", at: h.canceledAt ?? "" } : null,
  };
}

export type StopRefusal = "unknown-batch" | "finished" | "canceled" | "not-paused" | "already-paused";

export class StopRefusedError extends PayoutsError {
  override readonly name = "StopRefusedError";
  constructor(
    readonly refusal: StopRefusal,
    readonly batchId: string,
  ) {
    super(refusal === "unknown-batch" ? "NOT_FOUND" : "NOT_STOPPABLE", refusalMessage(refusal, batchId), {
      kind: refusal === "unknown-batch" ? "not-found" : "conflict",
    });
  }
}

function refusalMessage(refusal: StopRefusal, batchId: string): string {
  switch (refusal) {
    case "unknown-batch":
      return `no batch ${batchId}`;
    case "finished":
      return `batch ${batchId} is finished: every row has its outcome, nothing is left to stop`;
    case "canceled":
      return `batch ${batchId} was canceled; a canceled batch cannot be paused or resumed (retry its rows to pay them)`;
    case "not-paused":
      return `batch ${batchId} is not paused`;
    case "already-paused":
      return `batch ${batchId} is already paused`;
  }
}

async function checkStoppable(store: BatchStore, batchId: string): Promise<BatchStop> {
  const batch = await store.getBatch(batchId);
  if (!batch) throw new StopRefusedError("unknown-batch", batchId);
  if (batch.finishedAt) throw new StopRefusedError("finished", batchId);
  const stop = await readStop(store, batchId);
  if (stop.canceled) throw new StopRefusedError("canceled", batchId);
  return stop;
}

/**
 * Pauses a batch: no row of it is sent from now on, except rows already sent once on their attempt
 * (in flight). Returns false when it was paused already (nothing changed); `reason` says why, for
 * the banner and the notification.
 */
export async function pauseBatch(
  store: BatchStore,
  batchId: string,
  pause: { by: string; reason: string; at?: Date },
): Promise<boolean> {
  await checkStoppable(store, batchId);
  const at = (pause.at ?? new Date()).toISOString();
  const key = store.keys.stop(batchId);
  // HSETNX on `paused` first: of two pauses at once (an operator and the breaker), the first one's
  // who and why are kept.
  const results = await store.redis
    .multi()
    .hsetnx(key, "paused", "1")
    .hsetnx(key, "pausedBy", pause.by)
    .hsetnx(key, "pausedAt", at)
    .hsetnx(key, "reason", pause.reason)
    .exec();
  const [err, set] = results?.[0] ?? [null, 0];
  if (err) throw err;
  return set === 1;
}

/**
 * Resumes a paused batch: the pause is lifted, the breaker's counts start again, and its feed restarts
 * from the start of the batch, so every row still `queued` (never sent) is handed to the queue again.
 * A batch still awaiting approval is only unpaused: its approval feeds it. Returns the rows queued.
 */
export async function resumeBatch(
  store: BatchStore,
  enqueuer: RowEnqueuer,
  gate: Pick<SubmissionGate, "mayEnqueue">,
  batchId: string,
): Promise<number> {
  const stop = await checkStoppable(store, batchId);
  if (!stop.paused) throw new StopRefusedError("not-paused", batchId);
  await store.redis
    .multi()
    .hdel(store.keys.stop(batchId), "paused", "pausedBy", "pausedAt", "reason")
    .del(store.keys.breaker(batchId))
    .exec();
  const batch = await store.getBatch(batchId);
  if (!batch || !(await gate.mayEnqueue(batchId))) return 0;
  return enqueueQueuedRows(store, enqueuer, batch);
}

export interface CancelOutcome {
  /** Rows marked `canceled-unsent`: never sent, nothing paid. */
  unsent: number;
  /** Payments that were still `scheduled` and are now canceled at the service. */
  canceledAtService: number;
  /** Rows in flight or past cancel (in progress, paid, already final): they keep their course. */
  leftAlone: number;
  /** Payments the service would not cancel (already on their way): `row → code`. */
  notCanceled: Array<{ rowKey: string; code: string }>;
}

/**
 * Cancels a batch: pauses it (nothing new is sent), marks every row never sent `canceled-unsent`, and
 * cancels at the service every payment still `scheduled`. Safe to run again (a second run finishes
 * what a cut first one left).
 */
export async function cancelBatch(
  store: BatchStore,
  client: Pick<PayoutsClient, "payments">,
  batchId: string,
  cancel: { by: string; at?: Date },
): Promise<CancelOutcome> {
  const batch = await store.getBatch(batchId);
  if (!batch) throw new StopRefusedError("unknown-batch", batchId);
  if (batch.finishedAt) throw new StopRefusedError("finished", batchId);
  const at = (cancel.at ?? new Date()).toISOString();
  const key = store.keys.stop(batchId);
  // Paused first, in the same step as the cancel mark: from here on the send fence refuses every
  // first send of the batch, so the rows marked below cannot be sent behind our back.
  await store.redis
    .multi()
    .hsetnx(key, "paused", "1")
    .hsetnx(key, "pausedBy", cancel.by)
    .hsetnx(key, "pausedAt", at)
    .hsetnx(key, "reason", "canceled")
    .hsetnx(key, "canceled", "1")
    .hsetnx(key, "canceledBy", cancel.by)
    .hsetnx(key, "canceledAt", at)
    .srem(store.keys.feeding, batchId)
    .exec();
  const outcome: CancelOutcome = { unsent: 0, canceledAtService: 0, leftAlone: 0, notCanceled: [] };
  const note = `never sent: batch canceled by ${cancel.by}`;
  for await (const rowKeys of store.rowKeyPages(batchId)) {
    const states = await store.rowStates(batchId, rowKeys);
    for (const [i, rowKey] of rowKeys.entries()) {
      const s = states[i];
      if (!s) continue;
      if (s.state === "queued") {
        // Only a row never sent on this attempt (no `sentAttempt`): one sent may have paid.
        const marked = await store.changeRow(batchId, rowKey, {
          expectedAttempt: s.attempt,
          expect: { sentAttempt: null },
          to: "canceled-unsent",
          fields: { errorCode: BATCH_CANCELED, errorMessage: note },
          note,
        });
        if (marked.outcome === "ok") outcome.unsent++;
        else outcome.leftAlone++;
      } else if (s.state === "submitted") {
        const row = await store.getRow(batchId, rowKey);
        if (!row?.paymentId) {
          outcome.leftAlone++;
          continue;
        }
        try {
          const payment = await client.payments.cancel(row.paymentId);
          await adoptPayment(store, row, payment, `payment canceled: batch canceled by ${cancel.by}`);
          outcome.canceledAtService++;
        } catch (err) {
          if (!(err instanceof PayoutsApiError) || err.status === 0 || err.status >= 500) throw err;
          outcome.notCanceled.push({ rowKey, code: err.code });
        }
      } else if (s.state === "in-progress") {
        outcome.leftAlone++;
      }
    }
  }
  return outcome;
}
