/**
 * `payouts serve`: the HTTP server (webhook receiver, `/healthz`, `/metrics`, result downloads) until
 * SIGINT/SIGTERM; then it stops accepting, lets requests in flight finish, closes its connections
 * and exits 0. Reconcile jobs it queues are run by `payouts worker`.
 */
import type { Command } from "commander";
import { assembleServices } from "../../app/index.js";
import { ConfigError, loadConfig, requireApi } from "../../config/index.js";
import { configSecrets, createLogger } from "../../logging/index.js";
import type { ResultFileSource } from "../../server/index.js";
import { keepHeapLean } from "../lean-heap.js";
import { parsePort, redisPrefixOption } from "../options.js";
import { REDIS_START_WAIT_MS, requireRedis } from "../redis-check.js";
import { abortOn, untilShutdownSignal } from "../signals.js";

export interface ServeCommandOptions {
  port?: number;
  host: string;
  redisPrefix: string;
  shutdownGraceMs?: number;
}

/** How long requests in flight may take to finish on shutdown. */
const SHUTDOWN_GRACE_MS = 5_000;

export function registerServe(program: Command, deps: { resultFile?: ResultFileSource } = {}): void {
  program
    .command("serve")
    .description(
      "Run the HTTP server: operator console, HTTP API, webhook receiver, health, metrics and queue view",
    )
    .option("--port <n>", "port to listen on (default HTTP_PORT; 0 picks a free one)", parsePort)
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .addOption(redisPrefixOption())
    .action(async (opts: ServeCommandOptions) => {
      keepHeapLean();
      await runServe(opts, deps);
    });
}

export async function runServe(
  opts: ServeCommandOptions,
  deps: { resultFile?: ResultFileSource } = {},
): Promise<void> {
  const graceMs = opts.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
  // Past the grace (and a margin for closing connections) a stop that hangs ends the process anyway.
  const stopSignal = untilShutdownSignal({ graceMs: graceMs + 5_000 });
  const loaded = loadConfig();
  requireApi(loaded);
  if (!loaded.webhookSecret) throw new ConfigError("PAYOUTS_WEBHOOK_SECRET (or PAYOUTS_API_KEY) must be set");
  const config = { ...loaded, httpPort: opts.port ?? loaded.httpPort };
  const logger = createLogger({ level: config.logLevel, name: "server", secrets: configSecrets(config) });
  await requireRedis(config, {
    prefix: opts.redisPrefix,
    waitMs: REDIS_START_WAIT_MS,
    signal: abortOn(stopSignal),
    onWait: (problem) => logger.warn({ problem }, "Redis does not answer yet; waiting for it"),
  });
  const { WEBHOOK_PATH } = await import("../../server/index.js");
  const services = await assembleServices(config, {
    run: ["server"],
    prefix: opts.redisPrefix,
    logger,
    shutdownGraceMs: graceMs,
    server: { host: opts.host, ...(deps.resultFile ? { resultFile: deps.resultFile } : {}) },
  });
  const server = services.server!;
  logger.info({ url: server.url, webhook: `${server.url}${WEBHOOK_PATH}` }, "server listening");
  process.stdout.write(
    `listening on ${server.url} (console ${server.url}/, API ${server.url}/api/v1, webhooks at ${server.url}${WEBHOOK_PATH})\n`,
  );
  const signal = await stopSignal;
  logger.info({ signal }, "stopping: no new connections; finishing requests in flight");
  await services.stop();
  logger.info("server stopped");
  process.exitCode = 0;
}
