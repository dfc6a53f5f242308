/**
 * The shared, adaptive request rate against the sandbox's real request-rate limit:
 * two payment services (as two worker processes would) share one ceiling far above what the service
 * allows; the 429s bring the shared rate down near the service's rate, every row is paid exactly once,
 * and no Idempotency-Key is ever sent with another body.
 */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSharedRateLimiter, type SharedRateLimiter } from "../../../src/payouts-api/index.js";
import {
  connectRedis,
  createWorkerClient,
  type PaymentService,
  startPaymentService,
} from "../../../src/pipeline/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import {
  instruction,
  type PipelineHarness,
  paymentsOfBatch,
  pipelineHarness,
  REDIS_URL,
  waitForRows,
} from "../pipeline/helpers.js";

const SERVICE_RATE = 15;
const CEILING = 500;

let sandbox: RunningSandbox;
let h: PipelineHarness;
const services: PaymentService[] = [];
const redis = connectRedis(REDIS_URL, { autoPipelining: true });
let limiter: SharedRateLimiter;

beforeAll(async () => {
  sandbox = await startSandbox({
    clock: { toInProgressMs: 3_600_000, toFinalMs: 3_600_000 },
    faults: { rateLimitPerSecond: SERVICE_RATE },
  });
  h = await pipelineHarness(sandbox, "adaptive-rate");
  limiter = createSharedRateLimiter({ redis, prefix: h.prefix, ceilingPerSecond: CEILING });
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop(2000)));
  await redis.del(`${h.prefix}:ratelimit`);
  redis.disconnect();
  await h.close();
  await sandbox.close();
});

describe("a rate limit shared by every worker and adapting to 429s", () => {
  it("settles near what the service allows and pays every row exactly once", async () => {
    const rows = Array.from({ length: 90 }, (_, i) => instruction({ amount: 20_000 + i * 100 }));
    const batchId = await h.submit(rows);
    for (let i = 0; i < 2; i++) {
      services.push(
        await startPaymentService({
          ...PIPELINE_DEFAULTS,
          redisUrl: REDIS_URL,
          prefix: h.prefix,
          jobs: { attempts: 20, backoffMs: 50 },
          client: createWorkerClient({
            apiUrl: sandbox.url,
            apiKey: sandbox.apiKey,
            entityId: "me",
            limiter,
          }),
          concurrency: 16,
        }),
      );
    }
    const t0 = Date.now();
    const done = await waitForRows(h.store, batchId, (r) => r.state === "submitted", 90_000);
    const seconds = (Date.now() - t0) / 1000;
    expect(done).toHaveLength(rows.length);

    // Exactly once: one payment per row, and no key reused with another request.
    const payments = await paymentsOfBatch(h.api, batchId);
    expect(payments).toHaveLength(rows.length);
    expect(new Set(payments.map((p) => p.metadata?.payouts_row)).size).toBe(rows.length);
    const stats = sandbox.stats();
    expect(stats.idempotency.keysReusedWithDifferentRequest).toBe(0);

    const rate = await limiter.currentRate();
    process.stdout.write(
      `adaptive rate: ${rows.length} rows in ${seconds.toFixed(1)} s (${(stats.requests.total / seconds).toFixed(1)} req/s, ` +
        `service allows ${SERVICE_RATE}/s), ${stats.requests.rateLimited} of ${stats.requests.total} requests got 429, ` +
        `shared rate now ${rate}/s\n`,
    );
    // The shared rate came down from the ceiling, and the requests went at about the service's rate
    // (an upper bound only: a slow machine can only send less).
    expect(rate).toBeLessThan(CEILING / 2);
    expect(stats.requests.total / seconds).toBeLessThanOrEqual(SERVICE_RATE * 2);
    // Most requests went through: the limiter, not the service's 429s, did the pacing.
    expect(stats.requests.rateLimited).toBeLessThan(stats.requests.total / 2);
  });
});
