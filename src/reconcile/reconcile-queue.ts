/**
 * The reconcile queue: one job per payment event to look at (from a webhook or from the sweep), and
 * the sweep's own repeating job. Job data names only the payment: the job always fetches its current
 * state, so the order in which jobs run does not matter (DESIGN rule 5).
 */
import { createHash } from "node:crypto";
import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { bullPrefix } from "../pipeline/index.js";

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

/** Tries per reconcile job (API faults); a job that still fails is left to the next sweep. */
export const RECONCILE_JOB_OPTIONS: Readonly<JobsOptions> = {
  attempts: 8,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
};

/** BullMQ job ids must not contain `:` nor be digits only; anything unusual is hashed. */
function safeJobIdPart(value: string): string {
  return /^[A-Za-z0-9_-]{1,120}$/.test(value) ? value : createHash("sha256").update(value).digest("hex");
}

/**
 * A webhook job is keyed by its delivery (deliveries are deduplicated before this); a sweep job by
 * its payment, so a payment already waiting for a look is not queued twice by consecutive sweeps.
 */
export function reconcileJobId(data: ReconcileJobData): string {
  if (data.kind === "sweep") return "sweep";
  return data.origin === "webhook" && data.messageId
    ? `msg-${safeJobIdPart(data.messageId)}`
    : `sweep-${safeJobIdPart(data.paymentId)}`;
}

export function createReconcileQueue(connection: Redis, prefix: string): Queue<ReconcileJobData> {
  return new Queue<ReconcileJobData>(RECONCILE_QUEUE_NAME, { connection, prefix: bullPrefix(prefix) });
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
export function reconcileEnqueuer(queue: Queue<ReconcileJobData>, maxBatch = 500): ReconcileEnqueuer {
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
            opts: {
              ...RECONCILE_JOB_OPTIONS,
              jobId: reconcileJobId(data),
              // A failed job keeps its id and would silently block the next sweep's re-add of it.
              ...(data.kind === "payment" && data.origin === "sweep" ? { removeOnFail: true } : {}),
            },
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
