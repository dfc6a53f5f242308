/**
 * `payouts worker`: the payment worker. On start it finishes interrupted submissions, then processes
 * payment jobs until SIGINT/SIGTERM; then it stops taking jobs, lets in-flight ones finish within
 * `--shutdown-grace-ms`, closes every connection and exits 0.
 */
import type { Command } from "commander";
import { assembleServices, WORKER_SERVICES } from "../../app/index.js";
import { loadConfig, requireApi } from "../../config/index.js";
import { configSecrets, createLogger } from "../../logging/index.js";
import { DEFAULT_SHUTDOWN_GRACE_MS } from "../../pipeline/index.js";
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

/** `payouts worker`: the services of {@link WORKER_SERVICES}, until SIGINT or SIGTERM. */
export async function runWorker(opts: WorkerCommandOptions): Promise<void> {
  // A backstop: whatever still hangs after the grace (a stuck file read, a slow close, a start-up that
  // never ends) does not keep the process up. Jobs cut there run again under the same keys.
  const stopSignal = untilShutdownSignal({ graceMs: opts.shutdownGraceMs + 1_000 });
  const loaded = loadConfig();
  requireApi(loaded);
  const config = {
    ...loaded,
    workerConcurrency: opts.concurrency ?? loaded.workerConcurrency,
    rateLimitPerSecond: opts.rateLimit ?? loaded.rateLimitPerSecond,
  };
  const logger = createLogger({
    level: config.logLevel,
    name: "payment-worker",
    secrets: configSecrets(config),
  });
  await requireRedis(config, {
    prefix: opts.redisPrefix,
    waitMs: REDIS_START_WAIT_MS,
    signal: abortOn(stopSignal),
    onWait: (problem) => logger.warn({ problem }, "Redis does not answer yet; waiting for it"),
  });
  // A part that fails to start (a bad SCHEDULE_CRON, an unwritable DATA_DIR) stops the parts started
  // before it, and the process ends instead of staying half up.
  const services = await assembleServices(config, {
    run: WORKER_SERVICES,
    prefix: opts.redisPrefix,
    logger,
    shutdownGraceMs: opts.shutdownGraceMs,
    ...(opts.lockMs !== undefined ? { lockMs: opts.lockMs } : {}),
  });
  const resumed = services.payments?.resumed ?? [];
  if (resumed.length > 0) logger.info({ batches: resumed }, "finished interrupted submissions");
  logger.info({ concurrency: config.workerConcurrency, prefix: opts.redisPrefix }, "payment worker ready");
  const signal = await stopSignal;
  logger.info({ signal }, "stopping: no new sheets or jobs; waiting for in-flight payments");
  await services.stop();
  logger.info("payment worker stopped");
  process.exitCode = 0;
}

/** Registers the pipeline's commands (`worker`, `status`, `recover`) in one call from program.ts. */
export function registerPipelineCommands(program: Command): void {
  registerWorker(program);
  registerStatus(program);
  registerRecover(program);
}
