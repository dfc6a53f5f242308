/**
 * Prometheus metrics (prom-client), in one place so the server, the worker and the pipeline share
 * names. Process-wide metrics live in `processRegistry` (default process metrics, payments, service
 * request latency); each HTTP server adds its own registry (webhook deliveries, request latency) and
 * a collector for queue depth and row counts (`registerStateGauges`).
 *
 *   payouts_payments_total{outcome}                          rows' payment tries by outcome (worker)
 *   payouts_service_request_duration_seconds{method,route,status}  calls to the Payouts Service
 *   payouts_webhook_deliveries_total{outcome}                webhook deliveries (server)
 *   payouts_http_request_duration_seconds{method,route,status}     our own HTTP API (server)
 *   payouts_queue_jobs{queue,state}                          BullMQ jobs waiting, active, delayed, failed
 *   payouts_rows{state}                                      rows of unfinished batches by state
 *   payouts_rows_returned_total                              rows whose completed payment came back (worker)
 */
import type { Queue } from "bullmq";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { ROW_STATES, redisLayout } from "../batches/index.js";
import type { RequestHooks } from "../payouts-api/index.js";
import type { RowTryOutcome } from "../pipeline/index.js";
import type { RedisClient } from "../redis/index.js";

export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry, prefix: "payouts_" });

export const PROMETHEUS_CONTENT_TYPE = processRegistry.contentType;

const paymentsTotal = new Counter({
  name: "payouts_payments_total",
  help: "Rows' payment tries by outcome: created, adopted, rejected, error, skipped, retrying (a try failed and will run again).",
  labelNames: ["outcome"] as const,
  registers: [processRegistry],
});

const serviceRequestSeconds = new Histogram({
  name: "payouts_service_request_duration_seconds",
  help: "Calls to the Partner Payouts Service, per try, by method, route (ids replaced by :id) and HTTP status (0: no answer).",
  labelNames: ["method", "route", "status"] as const,
  buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [processRegistry],
});

const rowsReturnedTotal = new Counter({
  name: "payouts_rows_returned_total",
  help: "Rows whose completed payment the service later reported failed or canceled (returned).",
  registers: [processRegistry],
});

/** Counts one returned row (the reconciler's hook in the worker). */
export function countReturnedRow(): void {
  rowsReturnedTotal.inc();
}

/** `/payments/pay_123/fees` → `/payments/:id/fees`: one series per route, not per payment. */
export function routeOf(path: string): string {
  return path
    .split("?", 1)[0]!
    .split("/")
    .map((seg) => (/^[a-z]{2,6}_[A-Za-z0-9_-]+$/.test(seg) || /^\d+$/.test(seg) ? ":id" : seg))
    .join("/");
}

/** Client hooks that time every try (pass as the payouts client's `hooks`). */
export function serviceRequestHooks(): RequestHooks {
  return {
    onResponse: (info) =>
      serviceRequestSeconds.observe(
        { method: info.method, route: routeOf(info.path), status: String(info.status) },
        info.durationMs / 1000,
      ),
  };
}

/** Counts one row's try by its outcome (the payment worker's `onRowOutcome`). */
export function countPaymentOutcome(outcome: RowTryOutcome): void {
  paymentsTotal.inc({ outcome });
}

/**
 * Queue depth and rows by state, read from Redis when Prometheus scrapes (no timers). Rows are
 * summed over unfinished batches only: cost follows the live work, not the history.
 */
export function registerStateGauges(
  registry: Registry,
  source: { redis: RedisClient; prefix: string; queues: readonly Queue[] },
): void {
  const keys = redisLayout(source.prefix);
  new Gauge({
    name: "payouts_queue_jobs",
    help: "BullMQ jobs by queue and state.",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const queue of source.queues) {
        const counts = await queue.getJobCounts("waiting", "active", "delayed", "failed", "prioritized");
        for (const [state, n] of Object.entries(counts)) this.set({ queue: queue.name, state }, n);
      }
    },
  });
  new Gauge({
    name: "payouts_rows",
    help: "Rows of unfinished batches by state.",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const ids = await source.redis.smembers(keys.awaitingOutcomes);
      const sums = Object.fromEntries(ROW_STATES.map((s) => [s, 0])) as Record<string, number>;
      const pipeline = source.redis.pipeline();
      for (const id of ids.slice(0, 1000)) pipeline.hgetall(keys.counts(id));
      for (const [err, counts] of (await pipeline.exec()) ?? []) {
        if (err) continue;
        for (const [state, n] of Object.entries(counts as Record<string, string>)) {
          if (state in sums) sums[state] = (sums[state] ?? 0) + Number(n);
        }
      }
      for (const [state, n] of Object.entries(sums)) this.set({ state }, n);
    },
  });
}

/** The text exposition of several registries (process-wide first). */
export async function renderMetrics(...registries: Registry[]): Promise<string> {
  const parts = await Promise.all([processRegistry, ...registries].map((r) => r.metrics()));
  return parts.join("\n");
}

export { type RunningMetricsServer, startMetricsServer } from "./metrics-server.js";
export { Counter, Gauge, Histogram, Registry };
