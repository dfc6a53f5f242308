/**
 * Wiring of the pipeline's resources: Redis connections, the batch store, the payments queue, and the
 * payment service (worker + resume of interrupted submissions + orderly stop). Commands, the demo and
 * tests use these instead of building the pieces themselves.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Queue, Worker } from "bullmq";
import { type ApprovalPolicy, ApprovalStore, approvalGate, cliIdentity } from "../approvals/index.js";
import {
  type BatchPausedEvent,
  type Breaker,
  type BreakerSettings,
  createBreaker,
} from "../batch-control/index.js";
import {
  BatchFeeder,
  BatchStore,
  DEFAULT_KEY_PREFIX,
  type RowEnqueuer,
  resumeIncompleteBatches,
  type SubmissionGate,
  type SubmitBatchOptions,
  type SubmitBatchResult,
  submitBatch,
} from "../batches/index.js";
import { DuplicateIndex } from "../duplicates/index.js";
import { PayoutsError } from "../errors/index.js";
import type { LogSink } from "../logging/index.js";
import {
  createPayoutsClient,
  DEFAULT_JOB_RETRY_SETTINGS,
  type JobRetrySettings,
  type PayoutsClient,
  type RequestHooks,
  type RequestLimiter,
  WORKER_CLIENT_RETRY,
} from "../payouts-api/index.js";
import { checkLayoutVersion, connectRedis, type RedisClient, type RedisTarget } from "../redis/index.js";
import { startFeedLoop } from "./feed-loop.js";
import { createPaymentProcessor, type PaymentProcessor } from "./payment-processor.js";
import { createPaymentQueue, type PaymentJobData, paymentQueueEnqueuer } from "./payment-queue.js";
import { closeWorkerWithin, createPaymentWorker, type RowTryOutcome } from "./payment-worker.js";

/**
 * True for the errors a Redis connection gives when Redis is unreachable or went away mid-way (as
 * ioredis and BullMQ raise them), so commands can say "Redis" in one line instead of a stack trace.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === "MaxRetriesPerRequestError") return true;
  // ioredis aborts the commands of a pipeline in flight when the connection closes (AbortError).
  if (
    /^Connection is closed\.?$|enableOfflineQueue|^Redis connection lost|^Command aborted due to connection close/i.test(
      err.message,
    )
  )
    return true;
  return false;
}

/**
 * The API client as the worker uses it: a couple of quick in-process retries for blips, then the
 * fault goes to BullMQ (longer exponential backoff, same key and body). A 429 whose Retry-After is
 * set is never waited out here: the worker pauses the whole queue instead.
 */
export function createWorkerClient(api: {
  apiUrl: string;
  apiKey: string;
  entityId: string;
  timeoutMs?: number;
  /** The request rate shared by every worker (see createSharedRateLimiter). */
  limiter?: RequestLimiter | undefined;
  /** Per-try hooks (metrics). */
  hooks?: RequestHooks;
}): PayoutsClient {
  return createPayoutsClient({
    baseUrl: api.apiUrl,
    apiKey: api.apiKey,
    entityId: api.entityId,
    ...(api.timeoutMs !== undefined ? { timeoutMs: api.timeoutMs } : {}),
    ...(api.limiter ? { limiter: api.limiter } : {}),
    ...(api.hooks ? { hooks: api.hooks } : {}),
    retry: WORKER_CLIENT_RETRY,
  });
}

/** What opening the pipeline needs; the values come from the config (src/config), never from here. */
export interface PipelineSettings extends RedisTarget {
  /** Key prefix of everything the pipeline stores (default `payouts`). */
  prefix?: string;
  /** The payment jobs' retries; missing fields use DEFAULT_JOB_RETRY_SETTINGS (payouts-api/retry-policy.ts). */
  jobs?: Partial<JobRetrySettings>;
  /**
   * Which batches wait for approval (the APPROVAL_* settings). Required, so that no way of submitting
   * can forget the rules (docs/design.md §3.10).
   */
  approval: ApprovalPolicy;
  /**
   * How many payment jobs may wait in the queue at once (PAYOUTS_FEED_WINDOW): batches are fed to the
   * queue as their jobs finish (src/batches/batch-feeder.ts).
   */
  feedWindow: number;
  /**
   * Days back a row of an earlier batch makes a sheet's row a possible duplicate
   * (PAYOUTS_DUPLICATE_WINDOW_DAYS; 0: only within the sheet): every way of submitting flags the same.
   */
  duplicateWindowDays: number;
  /** DATA_DIR: the cross-batch duplicate index is rebuilt from its instruction archive when Redis lost it. */
  dataDir: string;
  /**
   * For one-shot commands (submit, retry, recover): a lost Redis connection fails the command rather
   * than waiting for Redis to come back (see connectRedis). Long-running services reconnect.
   */
  failFast?: boolean;
  /**
   * An open pipeline of these settings to submit through instead of opening one per submission (two
   * connections and the queue's scripts each time): the watched folder keeps one for all its sheets.
   */
  open?: Pipeline;
}

export interface Pipeline {
  redis: RedisClient;
  prefix: string;
  store: BatchStore;
  approvals: ApprovalStore;
  /** The approval gate every submission and resume goes through. */
  gate: SubmissionGate;
  /** The approval policy the gate applies (src/gate judges corrections by it too). */
  approvalPolicy: ApprovalPolicy;
  /**
   * The cross-batch index of what recent batches pay (docs/design.md §3.13), when the duplicate window
   * is on: submissions record and ask it, and so does the gate for corrected rows.
   */
  duplicates: DuplicateIndex | undefined;
  queue: Queue<PaymentJobData>;
  enqueuer: RowEnqueuer;
  close(): Promise<void>;
}

/** Opens the store and the queue. `close()` ends both and their connections. */
export function openPipeline(settings: PipelineSettings): Pipeline {
  const prefix = settings.prefix ?? DEFAULT_KEY_PREFIX;
  // The store and the queue get their own connections: BullMQ loads ~40 scripts onto its connection,
  // and ioredis copies every loaded script into each pipeline it builds (auto-pipelining builds many).
  const failFast = settings.failFast === true;
  const redis = connectRedis(settings, { autoPipelining: true, failFast });
  const queueConnection = connectRedis(settings, { failFast });
  const store = new BatchStore(redis, { prefix });
  const approvals = new ApprovalStore(redis, { prefix });
  const approvalPolicy = settings.approval;
  const gate = approvalGate(approvals, approvalPolicy);
  const duplicates =
    settings.duplicateWindowDays > 0
      ? new DuplicateIndex({
          redis,
          prefix,
          windowDays: settings.duplicateWindowDays,
          dataDir: settings.dataDir,
          paymentIdOf: async (batchId, rowKey) => (await store.getRow(batchId, rowKey))?.paymentId,
        })
      : undefined;
  const queue = createPaymentQueue(queueConnection, prefix);
  const enqueuer = paymentQueueEnqueuer(
    queue,
    { ...DEFAULT_JOB_RETRY_SETTINGS, ...settings.jobs },
    settings.feedWindow,
  );
  let closing: Promise<void> | undefined;
  return {
    redis,
    prefix,
    store,
    approvals,
    gate,
    approvalPolicy,
    duplicates,
    queue,
    enqueuer,
    close: () => {
      closing ??= (async () => {
        await queue.close();
        await queueConnection.quit().catch(() => queueConnection.disconnect());
        await redis.quit().catch(() => redis.disconnect());
      })();
      return closing;
    },
  };
}

/**
 * What `payouts submit`, the watched folder, the nightly run and the API call after validation:
 * records and enqueues the batch (resumably), through the approval gate. The submitter defaults to
 * `cli:<os user>`.
 */
export async function submitToPipeline(
  settings: PipelineSettings,
  input: Omit<SubmitBatchOptions, "store" | "enqueuer" | "gate">,
): Promise<SubmitBatchResult> {
  const pipeline = settings.open ?? openPipeline(settings);
  try {
    // A pipeline opened here is a one-shot command's: it checks the layout before it writes (a long-
    // running one checked at its start).
    if (pipeline !== settings.open) await checkLayoutVersion(pipeline.redis, pipeline.prefix);
    const result = await submitBatch({
      ...input,
      submittedBy: input.submittedBy ?? cliIdentity(),
      store: pipeline.store,
      enqueuer: pipeline.enqueuer,
      gate: pipeline.gate,
    });
    await confirmKept(pipeline.store, result);
    return result;
  } finally {
    if (pipeline !== settings.open) await pipeline.close();
  }
}

/** Redis does not hold a batch the way its submission just wrote it. */
export class SubmissionNotKeptError extends PayoutsError {
  override readonly name = "SubmissionNotKeptError";
  constructor(
    readonly batchId: string,
    what: string,
  ) {
    super(
      "SUBMISSION_NOT_KEPT",
      `Redis did not keep batch ${batchId} (${what}): it lost data while the batch was submitted. ` +
        "Submit the same file again: it finishes the submission, or says how to recover it; nothing is paid twice",
      { kind: "unavailable" },
    );
  }
}

/**
 * Reads back what a submission claims it wrote before anyone is told it succeeded: the batch record,
 * complete (or, when it waits for approval, with its rows recorded), and one row per valid row. A
 * Redis that restarted without its data (or was flushed) during the submission would otherwise let a
 * submitter report a batch id that `payouts status` does not know.
 */
async function confirmKept(store: BatchStore, result: SubmitBatchResult): Promise<void> {
  const progress = await store.progress(result.batchId);
  if (!progress) throw new SubmissionNotKeptError(result.batchId, "no batch record");
  const { batch, counts } = progress;
  const finished = result.awaitingApproval === true ? batch.rowsRecorded : batch.enqueueComplete;
  if (!finished) throw new SubmissionNotKeptError(result.batchId, "its record is not marked complete");
  const rows = Object.values(counts).reduce((sum, n) => sum + n, 0);
  if (rows !== batch.rowCount)
    throw new SubmissionNotKeptError(result.batchId, `${rows} of its ${batch.rowCount} rows are recorded`);
}

/**
 * BullMQ and the row records need Redis never to evict keys (`maxmemory-policy noeviction`): an
 * evicted row or job would silently drop a payment. Managed services may refuse CONFIG; then say nothing.
 */
async function warnUnlessNoEviction(redis: RedisClient, logger: LogSink | undefined): Promise<void> {
  try {
    const [, policy] = (await redis.config("GET", "maxmemory-policy")) as [string, string];
    if (policy && policy !== "noeviction") {
      logger?.warn(
        { policy },
        "Redis maxmemory-policy should be noeviction: evicted keys lose rows and jobs",
      );
    }
  } catch {
    // CONFIG is not available (managed Redis); nothing to check.
  }
}

export interface PaymentServiceOptions extends PipelineSettings {
  /** The API client; owned by the service from now on (closed by `stop`). */
  client: PayoutsClient;
  concurrency: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  quoteSafetyMs?: number;
  /** Told every row's outcome as its try ends (metrics count them). */
  onRowOutcome?: (outcome: RowTryOutcome) => void;
  logger?: LogSink;
  /** The circuit breaker (src/batch-control): its settings and what to do when it pauses a batch. */
  breaker?: { settings: BreakerSettings; onTrip: (event: BatchPausedEvent) => Promise<void> };
}

export interface PaymentService {
  pipeline: Pipeline;
  worker: Worker<PaymentJobData, void>;
  /** Batches whose interrupted submission this service finished when it started. */
  resumed: string[];
  /**
   * Stops taking jobs, lets in-flight ones finish, then aborts what is left (those jobs are handed
   * back to run again under the same keys; their rows do not change) and closes every connection,
   * all within `graceMs` in total. Idempotent.
   */
  stop(graceMs?: number): Promise<void>;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/**
 * The processor with every paid or refused row counted by the breaker. The breaker never fails a job:
 * a count that cannot be made is logged, and the row's outcome stands.
 */
function withBreaker(
  processor: PaymentProcessor,
  breaker: Breaker | undefined,
  logger: LogSink | undefined,
): PaymentProcessor {
  if (!breaker) return processor;
  return {
    ...processor,
    async process(data, run) {
      const result = await processor.process(data, run);
      const outcome =
        result.outcome === "paid"
          ? ({ paid: true } as const)
          : result.outcome === "rejected"
            ? { refused: result.code }
            : undefined;
      if (outcome) {
        await breaker.observe(data.batchId, outcome).catch((err: unknown) => {
          logger?.warn(
            { batchId: data.batchId, err: (err as Error).message },
            "circuit breaker: count failed",
          );
        });
      }
      return result;
    },
  };
}

/**
 * How a shutdown grace is spent: in-flight work may finish during `drainMs`; then what is left is
 * aborted and gets `settleMs` to hand its jobs back and close, so the whole stop fits in the grace.
 */
export function shutdownBudget(graceMs: number): { drainMs: number; settleMs: number } {
  const settleMs = Math.min(2_000, Math.floor(graceMs / 4));
  return { drainMs: graceMs - settleMs, settleMs };
}

export async function startPaymentService(options: PaymentServiceOptions): Promise<PaymentService> {
  const pipeline = openPipeline(options);
  // BullMQ workers block on their connection; give the worker its own, closed by us (not by BullMQ).
  const workerConnection = connectRedis(options);
  const breaker = options.breaker && createBreaker({ store: pipeline.store, ...options.breaker });
  const processor = withBreaker(
    createPaymentProcessor({
      store: pipeline.store,
      client: options.client,
      ...(options.quoteSafetyMs !== undefined ? { quoteSafetyMs: options.quoteSafetyMs } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    }),
    breaker,
    options.logger,
  );
  await warnUnlessNoEviction(pipeline.redis, options.logger);
  let resumed: string[];
  try {
    resumed = await resumeIncompleteBatches(pipeline.store, pipeline.enqueuer, pipeline.gate);
  } catch (err) {
    await pipeline.close();
    workerConnection.disconnect();
    throw err;
  }
  const worker = createPaymentWorker({
    connection: workerConnection,
    prefix: pipeline.prefix,
    processor,
    concurrency: options.concurrency,
    ...(options.lockDurationMs !== undefined ? { lockDurationMs: options.lockDurationMs } : {}),
    ...(options.stalledIntervalMs !== undefined ? { stalledIntervalMs: options.stalledIntervalMs } : {}),
    ...(options.onRowOutcome ? { onRowOutcome: options.onRowOutcome } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  // Batches reach the queue a window at a time (src/batches/batch-feeder.ts): finished jobs make room.
  const feedLoop = startFeedLoop(new BatchFeeder(pipeline.store, pipeline.enqueuer), {
    logger: options.logger,
  });
  worker.on("completed", () => feedLoop.nudge());
  worker.on("failed", () => feedLoop.nudge());
  feedLoop.tick();
  let stopping: Promise<void> | undefined;
  return {
    pipeline,
    worker,
    resumed,
    stop: (graceMs = DEFAULT_SHUTDOWN_GRACE_MS) => {
      stopping ??= (async () => {
        const { drainMs, settleMs } = shutdownBudget(graceMs);
        await feedLoop.stop();
        const finished = await closeWorkerWithin(worker, drainMs);
        if (!finished) {
          options.logger?.warn(
            { graceMs },
            "in-flight payments did not finish in time; aborting them: they run again under the same keys",
          );
          await options.client.close();
          await Promise.race([worker.close(), sleep(settleMs, undefined, { ref: false })]);
        }
        await options.client.close();
        await breaker?.flush().catch((err: unknown) => {
          options.logger?.warn({ err: (err as Error).message }, "circuit breaker: count failed");
        });
        await pipeline.close();
        await workerConnection.quit().catch(() => workerConnection.disconnect());
      })();
      return stopping;
    },
  };
}
