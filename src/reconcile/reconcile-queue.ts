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
 * How long a webhook's look at a payment waits, gathering the payment's other deliveries: a payment's
 * `created`, `in-progress` and final events often come within seconds, and one GET after the last of
 * them tells as much as three. Only latency is traded: a delivery is never dropped (see
 * {@link reconcileJobOptions}).
 */
export const DEFAULT_RECONCILE_DEBOUNCE_MS = 4_000;

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
    deduplication: { id: reconcileDedupId(data.paymentId), keepLastIfActive: true },
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
 * Queues reconcile jobs, gathering the requests of one event-loop turn into one `addBulk`: under a
 * burst of deliveries that turns hundreds of Redis round trips into a few (the receiver's throughput
 * target). Each caller still learns whether its own job was stored.
 */
export function reconcileEnqueuer(
  queue: Queue<ReconcileJobData>,
  maxBatch = 500,
  debounceMs: number = DEFAULT_RECONCILE_DEBOUNCE_MS,
): ReconcileEnqueuer {
  let pending: { data: ReconcileJobData; resolve: () => void; reject: (err: unknown) => void }[] = [];
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    while (pending.length > 0) {
      const batch = pending.slice(0, maxBatch);
      pending = pending.slice(maxBatch);
      queue
        .addBulk(
          batch.map(({ data }) => ({
            name: data.kind,
            data,
            opts: data.kind === "payment" ? reconcileJobOptions(data, debounceMs) : RECONCILE_JOB_OPTIONS,
          })),
        )
        .then(
          () => {
            for (const p of batch) p.resolve();
          },
          (err: unknown) => {
            for (const p of batch) p.reject(err);
          },
        );
    }
  };

  return {
    enqueue(data) {
      return new Promise<void>((resolve, reject) => {
        pending.push({ data, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
