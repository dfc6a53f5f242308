/**
 * The composition root: every long-running service of `payouts worker`, `serve`, `watch` and `demo`
 * is built here from one config, so each command runs the same parts wired the same way and picks
 * only which of them it runs. The demo differs from production only by what its config says (its
 * own Redis, the embedded sandbox as the API) and by the few timings in {@link AssembleOptions}.
 *
 * Stopping mirrors the start: the server stops taking requests, then the workers drain in parallel
 * within one grace, then what they wrote through is closed, newest first (the result files' last
 * writes come after the payment service has closed its own connections).
 */
import { ApprovalStore, type SettleResult } from "../approvals/index.js";
import { type ApprovalService, startApprovalService } from "../approvals/sweep/index.js";
import { AuditTrail } from "../audit/index.js";
import { BatchStore } from "../batches/index.js";
import { type AppConfig, ConfigError, requireApi } from "../config/index.js";
import { auditAndRecord } from "../ledger-audit/index.js";
import type { LogSink } from "../logging/index.js";
import {
  countPaymentOutcome,
  countReturnedRow,
  Registry,
  registerStateGauges,
  serviceRequestHooks,
  startMetricsServer,
} from "../metrics/index.js";
import {
  batchFinishedHandler,
  batchPausedHandler,
  type NotifyOptions,
  payoutReturnedHandler,
} from "../notify/index.js";
import {
  createPayoutsClient,
  createSharedRateLimiter,
  type Payment,
  type PayoutsClient,
  type SharedRateLimiter,
} from "../payouts-api/index.js";
import {
  connectRedis,
  createWorkerClient,
  type PaymentService,
  type PipelineSettings,
  shutdownBudget,
  startPaymentService,
} from "../pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../reconcile/index.js";
import type { RedisClient } from "../redis/index.js";
import {
  createResultFiles,
  createResultOutbox,
  type ResultFiles,
  type ResultOutbox,
} from "../results/index.js";
import { type ScheduleService, startScheduleService } from "../schedule/index.js";
import { type ResultFileSource, type RunningServer, startServer } from "../server/index.js";
import { startWatchService, type WatchService } from "../watch/index.js";
import type { ServiceName } from "./service-names.js";
import { intakeConnection, pipelineSettings } from "./settings.js";

export interface AssembleOptions {
  /** The parts to start, in this order (see {@link ServiceName}). */
  run: readonly ServiceName[];
  /** Key prefix of the installation (`--redis-prefix`). */
  prefix: string;
  logger: LogSink;
  /** How long `stop()` may take when not told (and when a part fails to start). */
  shutdownGraceMs: number;
  /** Job lock of the payment worker (`--lock-ms`): a crashed worker's jobs run again after this long. */
  lockMs?: number;
  /** Sweep timings of reconciliation (the demo settles its sample in seconds); default src/reconcile's. */
  reconcile?: { sweepEveryMs?: number; staleAfterMs?: number };
  /** Minimum time between two writes of a batch's result file; default src/results'. */
  outboxDebounceMs?: number;
  /** The watched folder's rescan interval (`payouts watch --rescan-ms`); default src/watch's. */
  watchRescanMs?: number;
  /** The server's address and result downloads (tests); default HTTP_PORT on 127.0.0.1. */
  server?: { host?: string; resultFile?: ResultFileSource };
}

export interface Services {
  /** The pipeline settings every part was given. */
  pipeline: PipelineSettings;
  /** The request rate every API call of these services shares with every other process (with `payments`). */
  limiter?: SharedRateLimiter;
  payments?: PaymentService;
  outbox?: ResultOutbox;
  reconcile?: ReconcileService;
  approvals?: ApprovalService;
  watch?: WatchService;
  schedule?: ScheduleService;
  server?: RunningServer;
  /**
   * Stops everything started, in order, within `graceMs`: the server, then the workers in parallel
   * (in-flight payments may finish; what is cut runs again under the same keys), then the outbox's
   * last writes and the connections. Idempotent.
   */
  stop(graceMs?: number): Promise<void>;
}

/** NOTIFY_URL with its signing secret, when both are set. */
function notifyOf(config: AppConfig): Pick<NotifyOptions, "url" | "secret"> | undefined {
  return config.notifyUrl && config.webhookSecret
    ? { url: config.notifyUrl, secret: config.webhookSecret }
    : undefined;
}

/** What every part is built from, and where each registers how it stops. */
interface Assembly {
  config: AppConfig;
  options: AssembleOptions;
  api: { apiUrl: string; apiKey: string; entityId: string };
  notify: Pick<NotifyOptions, "url" | "secret"> | undefined;
  /** The connection that outlives the drains (closed last), and the store and result files on it. */
  lastRedis: RedisClient;
  store: BatchStore;
  files: ResultFiles;
  services: Services;
  /** Stopped first (the server stops taking requests). */
  closeFirst: Array<(graceMs: number) => Promise<unknown>>;
  /** Drained in parallel within the grace. */
  drains: Array<(graceMs: number) => Promise<unknown>>;
  /** Closed after the drains, newest first. */
  finals: Array<() => Promise<unknown>>;
}

/**
 * Starts the parts `options.run` names, from `config`. A part that fails to start stops every part
 * started before it, and the error is thrown.
 */
export async function assembleServices(config: AppConfig, options: AssembleOptions): Promise<Services> {
  const { logger } = options;
  const runs = (name: ServiceName) => options.run.includes(name);
  const pipeline = pipelineSettings(config, options.prefix);
  const services: Services = { pipeline, stop: async () => undefined };
  // The result files' and notifications' last writes come after the payment service has closed its
  // own connections: their connection is closed last.
  const lastRedis = connectRedis(pipeline, { autoPipelining: true });
  const store = new BatchStore(lastRedis, { prefix: options.prefix });
  const a: Assembly = {
    config,
    options,
    // The API the services call: PAYOUTS_API_URL/KEY, or the demo's sandbox (set in its config).
    api: requireApi(config),
    notify: notifyOf(config),
    lastRedis,
    store,
    // Result downloads and the outbox share the files (a download reuses what the outbox just wrote).
    files: createResultFiles({ store, dataDir: config.dataDir }),
    services,
    closeFirst: [],
    drains: [],
    finals: [async () => lastRedis.quit().catch(() => lastRedis.disconnect())],
  };
  const logStopFailure = (err: unknown) => logger.error({ err }, "stop failed");
  let stopping: Promise<void> | undefined;
  services.stop = (graceMs = options.shutdownGraceMs) => {
    stopping ??= (async () => {
      for (const close of a.closeFirst) await close(graceMs).catch(logStopFailure);
      await Promise.all(a.drains.map((stop) => stop(graceMs).catch(logStopFailure)));
      for (const close of a.finals.reverse()) await close().catch(logStopFailure);
    })();
    return stopping;
  };
  try {
    if (runs("payments")) {
      const client = await startPayments(a);
      if (runs("reconcile")) await startReconcile(a, client);
      if (config.metricsPort > 0) await startMetrics(a);
    }
    if (runs("approvals")) await startApprovals(a);
    if (runs("watch") || runs("schedule")) await startIntakes(a, runs("watch"), runs("schedule"));
    if (runs("server")) await startServerPart(a);
  } catch (err) {
    logger.error({ err }, "services failed to start");
    await services.stop();
    throw err;
  }
  return services;
}

/**
 * The payment service with the shared rate limit, the breaker and the result files; returns how to
 * make another client on the same rate (reconciliation and ledger checks share it).
 */
async function startPayments(a: Assembly): Promise<() => PayoutsClient> {
  const { config, options, api, services, store } = a;
  const { prefix, logger } = options;
  // Every request of these services shares one rate with every other process:
  // PAYOUTS_RATE_LIMIT_PER_SECOND's one mechanism.
  const limiter = createSharedRateLimiter({
    redis: a.lastRedis,
    prefix,
    ceilingPerSecond: config.rateLimitPerSecond,
    onError: (err) => logger.warn({ err }, "shared rate limit unavailable"),
  });
  services.limiter = limiter;
  const client = (): PayoutsClient =>
    createWorkerClient({ ...api, timeoutMs: config.apiTimeoutMs, limiter, hooks: serviceRequestHooks() });
  const payments = await startPaymentService({
    ...services.pipeline,
    client: client(),
    concurrency: config.workerConcurrency,
    onRowOutcome: countPaymentOutcome,
    ...(options.lockMs !== undefined
      ? { lockDurationMs: options.lockMs, stalledIntervalMs: options.lockMs }
      : {}),
    logger,
    breaker: {
      settings: config.breaker,
      onTrip: batchPausedHandler({ notify: a.notify, audit: new AuditTrail(a.lastRedis, prefix), logger }),
    },
  });
  services.payments = payments;
  a.drains.push((graceMs) => payments.stop(graceMs));
  // Result files in DATA_DIR/outbox follow every row change, debounced per batch; a file that
  // cannot be written (a full disk) is retried until it is, logged at warn, then error.
  const outbox = createResultOutbox({
    store,
    dataDir: config.dataDir,
    files: a.files,
    ...(options.outboxDebounceMs !== undefined ? { debounceMs: options.outboxDebounceMs } : {}),
    logger,
  });
  services.outbox = outbox;
  a.finals.push(() => outbox.close());
  const touched = (job: { data: { batchId: string } } | undefined) => {
    if (job) outbox.markDirty(job.data.batchId);
  };
  payments.worker.on("completed", touched);
  payments.worker.on("failed", touched);
  return client;
}

/**
 * Reconciliation beside the payments: rows marked by webhook deliveries and by the sweep are read a
 * page of the batch's payments at a time; finished batches stay watched for returns for
 * PAYOUTS_RETURN_WATCH_DAYS, and are held against the service's ledger before they are announced.
 */
async function startReconcile(a: Assembly, client: () => PayoutsClient): Promise<void> {
  const { config, options, store, services, notify } = a;
  const { prefix, logger } = options;
  const outbox = services.outbox!;
  const returned = payoutReturnedHandler({ store, notify, logger });
  const auditClient = client();
  a.finals.push(() => auditClient.close());
  // A row the audit finds behind its payment (returned since its last look) follows it here, with its
  // notification, before the outcome is kept: the outcome does not go stale a moment later.
  let follow: ((payments: readonly Payment[]) => Promise<unknown>) | undefined;
  const ledgerCheck = async (batchId: string): Promise<void> => {
    try {
      const { report } = await auditAndRecord({ store, client: auditClient, batchId, follow });
      const level = report.differences.length === 0 ? "info" : "warn";
      logger[level]({ batchId, pages: report.pages, summary: report.summary }, "ledger audit");
    } catch (err) {
      logger.warn({ batchId, err }, "ledger audit of a finished batch failed");
    }
  };
  const approvalStore = new ApprovalStore(a.lastRedis, { prefix });
  const timings = options.reconcile ?? {};
  const reconcile = await startReconcileService({
    redisUrl: services.pipeline.redisUrl,
    redisClusterNodes: services.pipeline.redisClusterNodes,
    prefix,
    client: client(),
    ...(timings.sweepEveryMs !== undefined ? { sweepEveryMs: timings.sweepEveryMs } : {}),
    ...(timings.staleAfterMs !== undefined ? { staleAfterMs: timings.staleAfterMs } : {}),
    watchForMs: config.returnWatchDays * 86_400_000,
    onRowsChanged: (batchId) => outbox.markDirty(batchId),
    onRowReturned: (row) => {
      countReturnedRow();
      return returned(row);
    },
    onBatchFinished: batchFinishedHandler({
      store,
      outbox,
      dataDir: config.dataDir,
      notify,
      logger,
      approvalOf: (batchId) => approvalStore.get(batchId),
      beforeNotify: ledgerCheck,
    }),
    logger,
  });
  services.reconcile = reconcile;
  follow = (payments) => reconcile.processor.applyPayments(payments);
  // Looks only read the ledger: cut at the end of the drain, their marks stay for the next look.
  a.drains.push((graceMs) => reconcile.stop(shutdownBudget(graceMs).drainMs));
}

/** Prometheus: process metrics, payments by outcome, service latency, queue depth, rows by state. */
async function startMetrics(a: Assembly): Promise<void> {
  const payments = a.services.payments!;
  const registry = new Registry();
  registerStateGauges(registry, {
    redis: payments.pipeline.redis,
    prefix: a.options.prefix,
    queues: [payments.pipeline.queue, ...(a.services.reconcile ? [a.services.reconcile.queue] : [])],
  });
  const metrics = await startMetricsServer({ port: a.config.metricsPort, registries: [registry] });
  a.finals.push(() => metrics.close());
  a.options.logger.info({ url: metrics.url }, "metrics served");
}

/** Held batches: expiry, follow-ups of decisions a crash interrupted, `batch.awaiting_approval`. */
async function startApprovals(a: Assembly): Promise<void> {
  const { outbox, reconcile } = a.services;
  const onSettled = (batchId: string, result: SettleResult) => {
    outbox?.markDirty(batchId);
    // An expired (or rejected) batch's rows all ended canceled here: it finishes now, with its final
    // result file and notification, not at the next reconcile sweep.
    if (result.outcome !== "canceled" || !reconcile) return;
    reconcile.processor.finishIfDone(batchId).catch((err: unknown) => {
      // The reconcile sweep finishes it later.
      a.options.logger.warn({ batchId, err }, "finishing a canceled batch failed");
    });
  };
  const approvals = await startApprovalService({
    ...a.services.pipeline,
    notify: a.notify,
    onSettled,
    logger: a.options.logger,
  });
  a.services.approvals = approvals;
  a.drains.push(() => approvals.stop());
}

/** The watched inbox and the nightly runs share one sheet intake (DATA_DIR/inbox, DATA_DIR/scheduled). */
async function startIntakes(a: Assembly, watch: boolean, schedule: boolean): Promise<void> {
  const { config, options, services } = a;
  const intake = intakeConnection(config, a.api, options.prefix, options.logger);
  if (watch) {
    const service = await startWatchService({
      ...intake,
      ...config.watch,
      ...(options.watchRescanMs !== undefined ? { rescanMs: options.watchRescanMs } : {}),
    });
    services.watch = service;
    a.drains.push(() => service.stop());
  }
  if (schedule) {
    const service = await startScheduleService({
      ...intake,
      ...config.watch,
      cron: config.scheduleCron,
      tz: config.scheduleTz,
    });
    services.schedule = service;
    a.drains.push((graceMs) => service.stop(shutdownBudget(graceMs).drainMs));
  }
}

/** The HTTP server of `payouts serve`: console, API, webhook receiver, health, result downloads. */
async function startServerPart(a: Assembly): Promise<void> {
  const { config, options, api } = a;
  if (!config.webhookSecret) throw new ConfigError("PAYOUTS_WEBHOOK_SECRET (or PAYOUTS_API_KEY) must be set");
  // The health check wants a quick yes or no, not the client's retries.
  const healthClient = createPayoutsClient({
    baseUrl: api.apiUrl,
    apiKey: api.apiKey,
    entityId: api.entityId,
    timeoutMs: 2_000,
    retry: { maxAttempts: 1 },
  });
  a.finals.push(() => healthClient.close());
  // Validation and cancels get the ordinary client (its timeouts and retries).
  const apiClient = createPayoutsClient({
    baseUrl: api.apiUrl,
    apiKey: api.apiKey,
    entityId: api.entityId,
    timeoutMs: config.apiTimeoutMs,
    hooks: serviceRequestHooks(),
  });
  a.finals.push(() => apiClient.close());
  const server = await startServer({
    ...a.services.pipeline,
    webhookSecret: config.webhookSecret,
    client: healthClient,
    apiClient,
    dataDir: config.dataDir,
    entityId: config.entityId,
    uploadLimitBytes: config.uploadLimitBytes,
    uploadKeep: config.uploadKeep,
    trustProxy: config.trustProxy,
    port: config.httpPort,
    host: options.server?.host ?? "127.0.0.1",
    resultFile:
      options.server?.resultFile ??
      (async (batchId, format) => {
        const file = await a.files.resultFile(batchId, format);
        return file === undefined ? undefined : { path: file };
      }),
    logger: options.logger,
  });
  a.services.server = server;
  a.closeFirst.push((graceMs) => server.close(graceMs));
}
