/**
 * The reconcile queue: one job per payment to look at (from webhooks or from the sweep), and
 * the sweep's own repeating job. Job data names only the payment: the job always fetches its current
 * state, so the order in which jobs run does not matter (docs/design.md §3.5).
 */
import { createHash } from "node:crypto";
import { type JobsOptions, Queue } from "bullmq";
import { DEFAULT_JOB_RETRY_SETTINGS, jobRetryOptions } from "../payouts-api/index.js";
import { bullPrefix, QUEUE_EVENTS_KEPT, quietQueue } from "../pipeline/index.js";
import type { RedisClient } from "../redis/index.js";

export const RECONCILE_QUEUE_NAME = "reconcile";
export const SWEEP_SCHEDULER_ID = "reconcile-sweep";

export type ReconcileJobData =
  | {
      kind: "payment";
      paymentId: string;
      /** What asked for it: a delivery (event and messageId, for logs) or the sweep. */
      origin: "webhook" | "sweep";
      event?: string;
      messageId?: string;
    }
  | { kind: "sweep" };

/**
 * A reconcile job retries API faults by the shared job retry policy (payouts-api/retry-policy.ts); one
 * that still fails is left to the next sweep.
 */
export const RECONCILE_JOB_OPTIONS: Readonly<JobsOptions> = {
  ...jobRetryOptions(DEFAULT_JOB_RETRY_SETTINGS),
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
};

/** BullMQ ids must not contain `:`; anything unusual is hashed. */
function safeIdPart(value: string): string {
  return /^[A-Za-z0-9_-]{1,120}$/.test(value) ? value : createHash("sha256").update(value).digest("hex");
}

/**
 * How long a webhook's look at a payment waits after the payment's LAST delivery so far, gathering its
 * other deliveries: a payment's `created`, `in-progress` and final events often come within seconds,
 * and one GET after the last of them tells as much as three. Every delivery restarts the wait of the
 * payment's waiting look (BullMQ's `reschedule`, see {@link reconcileJobOptions}); only latency is
 * traded, a delivery is never dropped.
 *
 * Why from the last delivery and not from the first: a wait counted from `api.payment.created` (sent as
 * the payment is made) must outlast the whole settlement, which is 4.5 s in the sandbox only when it
 * keeps up; when it lags (busy creating hundreds of payments a second, or delivering late) the look saw
 * `in-progress` and the final delivery cost a second GET (bench:e2e on a quiet machine: 1.81 GETs per
 * row with a 5 s wait from the first). Counted from the last, the wait only has to outlast the gap
 * between two deliveries (3 s in the sandbox, in-progress to final), whatever the lag before them.
 * Preferred to skipping `created` deliveries for payments the row already holds: that needs a row read
 * per delivery in the receiver, and `created` is sent during the POST, usually before the worker has
 * written the answer on the row, so the check would mostly find the row not knowing the payment yet.
 * No cap beyond that: each delivery is a state change of the payment (repeats are dropped on their
 * messageId before they get here) and a payment has only a few, so the look comes at most this long
 * after the payment's last change; the sweep remains the backstop for deliveries that never come.
 */
export const DEFAULT_RECONCILE_DEBOUNCE_MS = 5_000;

/**
 * One look per payment at a time, whatever asked for it (a delivery or the sweep): BullMQ's
 * deduplication on the payment id. While that payment's job waits (delayed or queued), another request
 * is folded into it: the job has not fetched yet, so its GET will see whatever the new delivery
 * announced. While the job runs (it may have fetched already), the request is kept
 * (`keepLastIfActive`) and runs as a new job right after: no delivery is lost.
 */
export function reconcileDedupId(paymentId: string): string {
  return `pay-${safeIdPart(paymentId)}`;
}

export function reconcileJobOptions(
  data: Extract<ReconcileJobData, { kind: "payment" }>,
  debounceMs: number = DEFAULT_RECONCILE_DEBOUNCE_MS,
): JobsOptions {
  return {
    ...RECONCILE_JOB_OPTIONS,
    // The sweep's rows are stale already: no reason to wait for more deliveries.
    ...(data.origin === "webhook" && debounceMs > 0 ? { delay: debounceMs } : {}),
    deduplication: {
      id: reconcileDedupId(data.paymentId),
      keepLastIfActive: true,
      // A delivery folded into a look that still waits (delayed) restarts its wait from now: the look
      // comes one wait after the payment's last delivery (DEFAULT_RECONCILE_DEBOUNCE_MS says why).
      // A look already queued or running is not moved (keepLastIfActive above keeps the delivery).
      ...(data.origin === "webhook" && debounceMs > 0 ? { reschedule: true } : {}),
    },
  };
}

export function createReconcileQueue(connection: RedisClient, prefix: string): Queue<ReconcileJobData> {
  return quietQueue(
    new Queue<ReconcileJobData>(RECONCILE_QUEUE_NAME, {
      connection,
      prefix: bullPrefix(prefix),
      streams: { events: { maxLen: QUEUE_EVENTS_KEPT } },
    }),
  );
}

export interface ReconcileEnqueuer {
  /** Queues a look at one payment; resolves once the job is stored in Redis. */
  enqueue(job: Extract<ReconcileJobData, { kind: "payment" }>): Promise<void>;
}

/**
 * Queues reconcile jobs, gathering requests into one `addBulk`: while one `addBulk` is on its way to
 * Redis, the requests that come in wait and go together in the next (none waits when nothing is under
 * way). A delivery is one HTTP request, so gathering per event-loop turn left about one job per
 * `addBulk` under load; this gathers as many as arrive during a round trip. Requests for the same
 * payment (and origin) that wait together become one job: it is stored after all of them arrived, so
 * its GET sees whatever any of them announced. Each caller still learns whether its job was stored.
 */
export function reconcileEnqueuer(
  queue: Queue<ReconcileJobData>,
  maxBatch = 500,
  debounceMs: number = DEFAULT_RECONCILE_DEBOUNCE_MS,
): ReconcileEnqueuer {
  interface Waiter {
    resolve: () => void;
    reject: (err: unknown) => void;
  }
  /** Requests not sent yet, by payment and origin (Map order: first come, first sent). */
  let pending = new Map<string, { data: ReconcileJobData; waiters: Waiter[] }>();
  let inFlight = 0;

  const send = (batch: { data: ReconcileJobData; waiters: Waiter[] }[]): void => {
    inFlight++;
    Promise.resolve()
      .then(() =>
        queue.addBulk(
          batch.map(({ data }) => ({
            name: data.kind,
            data,
            opts: data.kind === "payment" ? reconcileJobOptions(data, debounceMs) : RECONCILE_JOB_OPTIONS,
          })),
        ),
      )
      .then(
        () => {
          for (const entry of batch) for (const w of entry.waiters) w.resolve();
        },
        (err: unknown) => {
          for (const entry of batch) for (const w of entry.waiters) w.reject(err);
        },
      )
      .finally(() => {
        inFlight--;
        flush();
      });
  };

  function flush(): void {
    if (inFlight > 0 || pending.size === 0) return;
    const entries = [...pending.values()];
    pending = new Map();
    for (let i = 0; i < entries.length; i += maxBatch) send(entries.slice(i, i + maxBatch));
  }

  return {
    enqueue(data) {
      return new Promise<void>((resolve, reject) => {
        const key = data.kind === "payment" ? `${data.origin}|${data.paymentId}` : `${Math.random()}`;
        const entry = pending.get(key);
        if (entry) entry.waiters.push({ resolve, reject });
        else pending.set(key, { data, waiters: [{ resolve, reject }] });
        // Nothing under way: go at the end of this turn (requests of the same turn go together).
        if (inFlight === 0 && pending.size === 1 && !entry) setImmediate(flush);
      });
    },
  };
}
