/**
 * `payouts worker`: the payment worker. On start it finishes interrupted submissions, then processes
 * payment jobs until SIGINT/SIGTERM; then it stops taking jobs, lets in-flight ones finish within
 * `--shutdown-grace-ms`, closes every connection and exits 0.
 */
import type { Command } from "commander";
import { ApprovalStore } from "../../approvals/index.js";
import { startApprovalService } from "../../approvals/sweep/index.js";
import { AuditTrail } from "../../audit/index.js";
import { BatchStore } from "../../batches/index.js";
import { loadConfig, requireApi } from "../../config/index.js";
import { auditAndRecord } from "../../ledger-audit/index.js";
import { configSecrets, createLogger } from "../../logging/index.js";
import {
  countReturnedRow,
  Registry,
  registerStateGauges,
  serviceRequestHooks,
  startMetricsServer,
  watchPaymentWorker,
} from "../../metrics/index.js";
import { batchFinishedHandler, batchPausedHandler, payoutReturnedHandler } from "../../notify/index.js";
import { createSharedRateLimiter } from "../../payouts-api/index.js";
import {
  connectRedis,
  createWorkerClient,
  DEFAULT_SHUTDOWN_GRACE_MS,
  shutdownBudget,
  startPaymentService,
} from "../../pipeline/index.js";
import { startReconcileService } from "../../reconcile/index.js";
import { createResultOutbox } from "../../results/index.js";
import { startScheduleService } from "../../schedule/index.js";
import { startWatchService } from "../../watch/index.js";
import { keepHeapLean } from "../lean-heap.js";
import { parsePositiveInt, redisPrefixOption } from "../options.js";
import { REDIS_START_WAIT_MS, requireRedis } from "../redis-check.js";
import { abortOn, untilShutdownSignal } from "../signals.js";
import { registerRecover } from "./recover.js";
import { registerStatus } from "./status.js";

export interface WorkerCommandOptions {
  concurrency?: number;
  rateLimit?: number;
  lockMs?: number;
  shutdownGraceMs: number;
  redisPrefix: string;
}

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description("Run the payment worker: one payment per queued row, until SIGINT/SIGTERM")
    .option("--concurrency <n>", "payments processed at once (default WORKER_CONCURRENCY)", parsePositiveInt)
    .option(
      "--rate-limit <n>",
      "payments started per second across all workers (default PAYOUTS_RATE_LIMIT_PER_SECOND)",
      parsePositiveInt,
    )
    .option("--lock-ms <n>", "job lock: a crashed worker's jobs run again after this long", parsePositiveInt)
    .option(
      "--shutdown-grace-ms <n>",
      "on SIGINT/SIGTERM, how long in-flight payments may take to finish",
      parsePositiveInt,
      DEFAULT_SHUTDOWN_GRACE_MS,
    )
    .addOption(redisPrefixOption())
    .action(async (opts: WorkerCommandOptions) => {
      keepHeapLean();
      await runWorker(opts);
    });
}

/**
 * `payouts worker`. Kept as one function on purpose: it starts the services in order and the shutdown
 * below stops them in the reverse order within one grace period, which needs every handle in one scope.
 */
export async function runWorker(opts: WorkerCommandOptions): Promise<void> {
  // A backstop: whatever still hangs after the grace (a stuck file read, a slow close, a start-up that
  // never ends) does not keep the process up. Jobs cut there run again under the same keys.
  const stopSignal = untilShutdownSignal({ graceMs: opts.shutdownGraceMs + 1_000 });
  const config = loadConfig();
  const api = requireApi(config);
  const logger = createLogger({
    level: config.logLevel,
    name: "payment-worker",
    secrets: configSecrets(config),
  });
  await requireRedis(config.redisUrl, {
    prefix: opts.redisPrefix,
    waitMs: REDIS_START_WAIT_MS,
    signal: abortOn(stopSignal),
    onWait: (problem) => logger.warn({ problem }, "Redis does not answer yet; waiting for it"),
  });
  const concurrency = opts.concurrency ?? config.workerConcurrency;
  // Everything started is stopped on a signal or when a later part fails to start (so a bad
  // SCHEDULE_CRON or an unwritable DATA_DIR ends the process instead of leaving it half up). The
  // workers drain in parallel, each within the one grace; the outbox writes the last result files
  // after them (the whole stop fits in the grace).
  const drains: Array<() => Promise<unknown>> = [];
  // Closed after the drains, newest first: the outbox's last writes, then what the clients used.
  const finals: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    await Promise.all(
      drains.map((stop) => stop().catch((err: unknown) => logger.error({ err: String(err) }, "stop failed"))),
    );
    for (const close of finals.reverse()) await close();
  };
  const { drainMs } = shutdownBudget(opts.shutdownGraceMs);
  try {
    // The connection that outlives the drains (closed last): the shared rate limit, and the result
    // files and finish notifications, whose last writes come after the payment service has closed its
    // own connections (the outbox once wrote its final files through a closed connection, silently).
    const lastRedis = connectRedis(config.redisUrl, { autoPipelining: true });
    finals.push(async () => lastRedis.quit().catch(() => lastRedis.disconnect()));
    const resultStore = new BatchStore(lastRedis, { prefix: opts.redisPrefix });
    const approvalStore = new ApprovalStore(lastRedis, { prefix: opts.redisPrefix });
    // Every request of this process (payments and reconciliation) shares one rate with all workers.
    const limiter = createSharedRateLimiter({
      redis: lastRedis,
      prefix: opts.redisPrefix,
      ceilingPerSecond: opts.rateLimit ?? config.rateLimitPerSecond,
      onError: (err) => logger.warn({ err }, "shared rate limit unavailable"),
    });
    const service = await startPaymentService({
      redisUrl: config.redisUrl,
      prefix: opts.redisPrefix,
      client: createWorkerClient({
        ...api,
        timeoutMs: config.apiTimeoutMs,
        limiter,
        hooks: serviceRequestHooks(),
      }),
      concurrency,
      rateLimitPerSecond: opts.rateLimit ?? config.rateLimitPerSecond,
      ...(opts.lockMs !== undefined ? { lockDurationMs: opts.lockMs, stalledIntervalMs: opts.lockMs } : {}),
      logger,
      breaker: {
        settings: config.breaker,
        onTrip: batchPausedHandler({
          notify:
            config.notifyUrl && config.webhookSecret
              ? { url: config.notifyUrl, secret: config.webhookSecret }
              : undefined,
          audit: new AuditTrail(lastRedis, opts.redisPrefix),
          logger,
        }),
      },
    });
    // Result files in DATA_DIR/outbox follow every row change: the payment jobs' (submitted, rejected,
    // error) and reconciliation's (in-progress, completed, failed), debounced per batch.
    // A result file that cannot be written (a full disk) is retried until it is, logged at warn, then error.
    const outbox = createResultOutbox({ store: resultStore, dataDir: config.dataDir, logger });
    finals.push(() => outbox.close());
    drains.push(() => service.stop(opts.shutdownGraceMs));
    const touched = (job: { data: { batchId: string } } | undefined) => {
      if (job) outbox.markDirty(job.data.batchId);
    };
    service.worker.on("completed", touched);
    service.worker.on("failed", touched);
    const notify =
      config.notifyUrl && config.webhookSecret
        ? { url: config.notifyUrl, secret: config.webhookSecret }
        : undefined;
    const returned = payoutReturnedHandler({ store: resultStore, notify, logger });
    // Every finished batch is held against the service's ledger (its outcome kept on the batch and
    // carried by the notification); the audit's reads share the rate with everything else.
    const auditClient = createWorkerClient({ ...api, timeoutMs: config.apiTimeoutMs, limiter });
    finals.push(() => auditClient.close());
    const ledgerCheck = async (batchId: string): Promise<void> => {
      try {
        const { report } = await auditAndRecord({ store: resultStore, client: auditClient, batchId });
        const level = report.differences.length === 0 ? "info" : "warn";
        logger[level]({ batchId, pages: report.pages, summary: report.summary }, "ledger audit");
      } catch (err) {
        logger.warn({ batchId, err }, "ledger audit of a finished batch failed");
      }
    };
    // Reconciliation runs beside the payments (its own client): rows marked by webhook deliveries
    // and by the sweep are read a page of the batch's payments at a time; finished batches stay
    // watched for returns for PAYOUTS_RETURN_WATCH_DAYS.
    const reconcile = await startReconcileService({
      redisUrl: config.redisUrl,
      prefix: opts.redisPrefix,
      client: createWorkerClient({
        ...api,
        timeoutMs: config.apiTimeoutMs,
        limiter,
        hooks: serviceRequestHooks(),
      }),
      watchForMs: config.returnWatchDays * 86_400_000,
      onRowsChanged: (batchId) => outbox.markDirty(batchId),
      onRowReturned: (row) => {
        countReturnedRow();
        return returned(row);
      },
      onBatchFinished: batchFinishedHandler({
        store: resultStore,
        outbox,
        dataDir: config.dataDir,
        notify,
        logger,
        approvalOf: (batchId) => approvalStore.get(batchId),
        beforeNotify: ledgerCheck,
      }),
      logger,
    });
    // Looks only read the ledger: cut at the end of the drain, their marks stay for the next look.
    drains.push(() => reconcile.stop(drainMs));
    // Held batches: expiry, follow-ups of decisions a crash interrupted, `batch.awaiting_approval`.
    const approvals = await startApprovalService({
      redisUrl: config.redisUrl,
      prefix: opts.redisPrefix,
      approval: config.approval,
      notify:
        config.notifyUrl && config.webhookSecret
          ? { url: config.notifyUrl, secret: config.webhookSecret }
          : undefined,
      onSettled: (batchId) => outbox.markDirty(batchId),
      logger,
    });
    drains.push(() => approvals.stop());
    // The watched inbox and the nightly runs share one sheet intake (DATA_DIR/inbox, DATA_DIR/scheduled).
    const intake = {
      dataDir: config.dataDir,
      ...api,
      apiTimeoutMs: config.apiTimeoutMs,
      redisUrl: config.redisUrl,
      prefix: opts.redisPrefix,
      logger,
    };
    const watch = await startWatchService({ ...intake, ...config.watch });
    drains.push(() => watch.stop());
    const schedule = await startScheduleService({
      ...intake,
      ...config.watch,
      cron: config.scheduleCron,
      tz: config.scheduleTz,
    });
    drains.push(() => schedule.stop(drainMs));
    if (config.metricsPort > 0) {
      // Prometheus: process metrics, payments by outcome, service latency, queue depth, rows by state.
      watchPaymentWorker(service.worker);
      const registry = new Registry();
      registerStateGauges(registry, {
        redis: service.pipeline.redis,
        prefix: opts.redisPrefix,
        queues: [service.pipeline.queue, reconcile.queue],
      });
      const metrics = await startMetricsServer({ port: config.metricsPort, registries: [registry] });
      finals.push(() => metrics.close());
      logger.info({ url: metrics.url }, "metrics served");
    }
    if (service.resumed.length > 0) {
      logger.info({ batches: service.resumed }, "finished interrupted submissions");
    }
    logger.info({ concurrency, prefix: opts.redisPrefix }, "payment worker ready");
  } catch (err) {
    logger.error({ err }, "payment worker failed to start");
    await stopAll();
    throw err;
  }
  const signal = await stopSignal;
  logger.info({ signal }, "stopping: no new sheets or jobs; waiting for in-flight payments");
  await stopAll();
  logger.info("payment worker stopped");
  process.exitCode = 0;
}

/** Registers the pipeline's commands (`worker`, `status`, `recover`) in one call from program.ts. */
export function registerPipelineCommands(program: Command): void {
  registerWorker(program);
  registerStatus(program);
  registerRecover(program);
}
