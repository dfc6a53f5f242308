/**
 * How a look at a payment is asked for (docs/design.md §3.5): a webhook delivery (or an operator's
 * cancel) *marks* its payment's row as needing a look, in its batch's index (look-index.ts), with the
 * payment id as a hint; no job per payment. The reconciler reads the marked rows' payments a page at
 * a time (look-runner.ts).
 *
 * The reconcile queue holds only the sweep's repeating job (one schedule shared by every worker).
 */
import { type JobsOptions, Queue } from "bullmq";
import type { Payment } from "../payouts-api/index.js";
import { bullPrefix, QUEUE_EVENTS_KEPT, quietQueue } from "../pipeline/index.js";
import { gatherCalls, type RedisClient } from "../redis/index.js";
import { LOOSE_BATCH, LookIndex, type LookMark } from "./look-index.js";

export const RECONCILE_QUEUE_NAME = "reconcile";
export const SWEEP_SCHEDULER_ID = "reconcile-sweep";

/** The reconcile queue's one kind of job: a sweep. */
export type ReconcileJobData = { kind: "sweep" };

export const RECONCILE_JOB_OPTIONS: Readonly<JobsOptions> = { removeOnComplete: true, removeOnFail: 100 };

/** A request to look at one payment: what a delivery (or a caller) knows about it. */
export interface LookRequest {
  kind: "payment";
  paymentId: string;
  /** `webhook`: wait for the row to go quiet first; `sweep`: due at once. */
  origin: "webhook" | "sweep";
  event?: string | undefined;
  messageId?: string | undefined;
  /** The payment's metadata as the delivery carried it: it names the batch, row and attempt to mark. */
  metadata?: Readonly<Record<string, string>> | undefined;
  /** When the change the delivery announces happened (its `occurredAt`). */
  occurredAt?: string | undefined;
}

export interface ReconcileEnqueuer {
  /** Marks the payment's row (or the payment alone) for a look; resolves once stored in Redis. */
  enqueue(request: LookRequest): Promise<void>;
  /** Marks many at once, in one Redis call (for a caller that gathers requests itself). */
  enqueueMany(requests: readonly LookRequest[]): Promise<void>;
}

/** How far back a mark that is due at once is dated: beyond any quiet time. */
export const DUE_AT_ONCE_MS = 3_600_000;

/** The mark a request makes: its row when the metadata names one, else the payment id alone. */
export function lookMarkOf(request: LookRequest): LookMark {
  const batchId = request.metadata?.payouts_batch;
  const member = request.metadata?.payouts_row;
  if (!batchId || !member || batchId.startsWith("~"))
    return { batchId: LOOSE_BATCH, member: request.paymentId };
  const attempt = Number(request.metadata?.payouts_attempt);
  const occurredAtMs = request.occurredAt === undefined ? 0 : Date.parse(request.occurredAt);
  return {
    batchId,
    member,
    hint: {
      paymentId: request.paymentId,
      attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 0,
      occurredAtMs: Number.isFinite(occurredAtMs) ? occurredAtMs : 0,
    },
  };
}

/**
 * Marks rows for a look, gathering the requests that arrive during one Redis round trip into one
 * script call. Each caller learns whether its mark was stored (the receiver answers 503 if not).
 */
export function lookMarker(redis: RedisClient, prefix: string): ReconcileEnqueuer {
  const index = new LookIndex(redis, prefix);
  const markMany = async (requests: readonly LookRequest[]): Promise<void> => {
    const webhook = requests.filter((r) => r.origin === "webhook").map(lookMarkOf);
    const now = requests.filter((r) => r.origin !== "webhook").map(lookMarkOf);
    await Promise.all([index.mark(webhook), index.mark(now, DUE_AT_ONCE_MS)]);
  };
  const mark = gatherCalls(async (requests: readonly LookRequest[]) => {
    await markMany(requests);
    return requests.map(() => undefined);
  });
  return { enqueue: (request) => mark(request), enqueueMany: markMany };
}

/**
 * Payments read elsewhere (an audit) whose rows should follow them: their rows are marked due at once,
 * so a running reconciler applies them (with their notifications) on its next look.
 */
export function markForLook(enqueuer: ReconcileEnqueuer) {
  return (payments: readonly Payment[]): Promise<void> =>
    enqueuer.enqueueMany(
      payments.map((p) => ({
        kind: "payment",
        paymentId: p.id,
        origin: "sweep",
        metadata: p.metadata,
        occurredAt: p.updatedAt,
      })),
    );
}

/**
 * Asks a worker for a sweep now rather than at its next turn. Rows made final outside the worker (a
 * batch's cancel marks its unsent rows and adopts its canceled payments; a rejection cancels them all)
 * turn no finish check there; the sweep marks such a batch finished, and the worker then writes its
 * final result file, audits it and sends its notification, seconds after the cancel instead of up to a
 * sweep period later. One job per request, never merged with a sweep already running: that one may
 * have read the batch before its rows turned final. Operators cancel rarely; a sweep costs a few
 * reads per unfinished batch.
 */
export async function sweepSoon(queue: Queue<ReconcileJobData>): Promise<void> {
  await queue.add("sweep", { kind: "sweep" }, { removeOnComplete: true, removeOnFail: true });
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
