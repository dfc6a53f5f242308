/**
 * `startServer`: the server of `payouts serve` with its resources: a Redis connection for dedupe keys,
 * users, uploads and the health ping; the pipeline (batch store and payment queue, own connections);
 * the reconcile queue (its depth metric); the API client for the health check and for validation and
 * cancels.
 */

import path from "node:path";
import { AuditTrail } from "../audit/index.js";
import { AuthStore } from "../auth/index.js";
import { DEFAULT_KEY_PREFIX } from "../batches/index.js";
import type { LogSink } from "../logging/index.js";
import { registerStateGauges } from "../metrics/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import { connectRedis, openPipeline, type PipelineSettings } from "../pipeline/index.js";
import { createReconcileQueue, lookMarker, sweepSoon } from "../reconcile/index.js";
import type { RedisClient } from "../redis/index.js";
import { createResultFiles } from "../results/index.js";
import type { UploadKeep } from "../uploads/index.js";
import { createHttpServer, listen, type RunningHttpServer } from "./http-server.js";
import { ServerMetrics } from "./metrics.js";
import type { ResultFileSource } from "./result-download.js";
import { createWebhookReceiver } from "./webhook-receiver.js";

/** The pipeline's settings (Redis, prefix, approval rules, windows: from the config) and the server's own. */
export interface ServerOptions extends PipelineSettings {
  /** The webhook signing secret (PAYOUTS_WEBHOOK_SECRET; default the API key). */
  webhookSecret: string;
  /** Used by `/healthz` (GET /limitations); owned by the caller, not closed here. */
  client: PayoutsClient;
  /** Used to validate uploads and cancel payments (default `client`); owned by the caller. */
  apiClient?: PayoutsClient;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  resultFile?: ResultFileSource;
  bodyLimitBytes?: number;
  dedupeTtlSeconds?: number;
  logger?: LogSink;
  /** DATA_DIR: uploads go to `<dataDir>/uploads/`, submitted sheets to `<dataDir>/archive/`. */
  dataDir: string;
  /** PAYOUTS_ENTITY_ID for submitted batches. */
  entityId: string;
  /** Largest sheet upload (UPLOAD_LIMIT_MB). */
  uploadLimitBytes: number;
  /** How long uploads stay in Redis (UPLOAD_KEEP_HOURS, UPLOAD_KEEP_SUBMITTED_DAYS). Default: src/uploads'. */
  uploadKeep?: UploadKeep;
  /** Behind a proxy that sets X-Forwarded-For/-Proto (HTTP_TRUST_PROXY). */
  trustProxy: boolean;
}

export interface RunningServer extends RunningHttpServer {
  metrics: ServerMetrics;
  /** The connection used for dedupe keys, users and uploads (for tests and the demo). */
  redis: RedisClient;
  auth: AuthStore;
}

/** Result downloads from the batch store (the file is rewritten when older than a couple of seconds). */
function resultFilesOf(store: import("../batches/index.js").BatchStore, dataDir: string): ResultFileSource {
  const files = createResultFiles({ store, dataDir });
  return async (batchId, format) => {
    const file = await files.resultFile(batchId, format);
    return file === undefined ? undefined : { path: file };
  };
}

function waitUntilReady(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once("ready", done);
  });
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  // Fails fast while Redis is away (no offline queue): the receiver answers 503 and the service retries.
  const redis = connectRedis(options, {
    autoPipelining: true,
    offlineQueue: false,
    maxRetriesPerRequest: 1,
  });
  // One warning per outage, instead of ioredis printing a stack trace for every reconnection attempt.
  let redisAway = false;
  redis.on("error", (err: Error) => {
    if (redisAway) return;
    redisAway = true;
    options.logger?.warn({ err }, "Redis is unreachable: webhook deliveries get 503 until it is back");
  });
  redis.on("ready", () => {
    redisAway = false;
  });
  // Without an offline queue, commands sent before the connection is up fail: wait for it (briefly;
  // if Redis is down, the server still starts, answers 503 to deliveries and says so in /healthz).
  await waitUntilReady(redis, 5_000);
  const queueConnection = connectRedis(options);
  const queue = createReconcileQueue(queueConnection, prefix);
  const pipelineSettings: PipelineSettings = {
    redisUrl: options.redisUrl,
    redisClusterNodes: options.redisClusterNodes,
    prefix,
    approval: options.approval,
    feedWindow: options.feedWindow,
    duplicateWindowDays: options.duplicateWindowDays,
    dataDir: path.resolve(options.dataDir),
  };
  const pipeline = openPipeline(pipelineSettings);
  const metrics = new ServerMetrics();
  // Deliveries (and cancels) mark rows for the reconciler's page reads, on the fail-fast connection.
  const reconcile = lookMarker(redis, prefix);
  const receiver = createWebhookReceiver({
    secret: options.webhookSecret,
    redis,
    prefix,
    enqueuer: reconcile,
    ...(options.dedupeTtlSeconds !== undefined ? { dedupeTtlSeconds: options.dedupeTtlSeconds } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const auth = new AuthStore(redis, prefix);
  const queues = [pipeline.queue, queue];
  registerStateGauges(metrics.registry, { redis, prefix, queues });
  const closeAll = async () => {
    await pipeline.close();
    await queue.close();
    await queueConnection.quit().catch(() => queueConnection.disconnect());
    await redis.quit().catch(() => redis.disconnect());
  };
  let running: RunningHttpServer;
  try {
    const app = await createHttpServer({
      receiver,
      metrics,
      healthChecks: {
        redis: () => redis.ping(),
        api: (signal) => options.client.limitations.get({ signal }),
      },
      resultFile: options.resultFile ?? resultFilesOf(pipeline.store, pipelineSettings.dataDir),
      ...(options.bodyLimitBytes !== undefined ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      trustProxy: options.trustProxy,
      api: {
        auth,
        audit: new AuditTrail(redis, prefix),
        redis,
        prefix,
        store: pipeline.store,
        enqueuer: pipeline.enqueuer,
        queues,
        reconcile,
        // The cancel or rejection itself is done: if Redis refuses the request, the next periodic
        // sweep finishes the batch.
        sweepSoon: () =>
          sweepSoon(queue).catch((err: unknown) => {
            options.logger?.warn(
              { err },
              "asking a worker for a sweep failed; its next sweep finishes the batch",
            );
          }),
        client: options.apiClient ?? options.client,
        pipeline: { ...pipelineSettings, open: pipeline },
        entityId: options.entityId,
        uploadLimitBytes: options.uploadLimitBytes,
        ...(options.uploadKeep ? { uploadKeep: options.uploadKeep } : {}),
      },
    });
    running = await listen(app, options.port ?? 0, options.host ?? "127.0.0.1");
  } catch (err) {
    await closeAll();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    ...running,
    metrics,
    redis,
    auth,
    close: (graceMs) => {
      closing ??= (async () => {
        await running.close(graceMs);
        await closeAll();
      })();
      return closing;
    },
  };
}
