/**
 * `npm run bench:webhooks [-- --deliveries N --concurrency C]`: N signed webhook deliveries (default
 * 20,000) POSTed over keep-alive connections (undici, C at a time, default 64) to the receiver of
 * `payouts serve`, which runs in its own process as it would in production. Each delivery is
 * verified (HMAC over the raw bytes), deduplicated in Redis and queued as a reconcile job; the run
 * checks that exactly N jobs were queued. Prints deliveries per second and p50/p99 latency
 * (target ≥ 3,000/s on a 2-core machine).
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); its keys live under a unique prefix and
 * are deleted at the end.
 */
import { type ChildProcess, fork } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { pipelineSettings } from "../src/app/index.js";
import { loadConfig } from "../src/config/index.js";
import { createPayoutsClient } from "../src/payouts-api/index.js";
import { connectRedis } from "../src/pipeline/index.js";
import { createReconcileQueue } from "../src/reconcile/index.js";
import { startServer, WEBHOOK_PATH } from "../src/server/index.js";
import { cpuSecondsOf } from "./lib/processes.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const SECRET = "whsec_bench_only_not_a_secret";

const { values } = parseArgs({
  options: {
    deliveries: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "64" },
    // Internal: run as the server process.
    "serve-prefix": { type: "string" },
  },
});

async function serveChild(prefix: string): Promise<void> {
  const config = loadConfig({});
  // The health check's client is never called during the run.
  const client = createPayoutsClient({ entityId: "me", baseUrl: "http://127.0.0.1:9/v2", apiKey: "bench" });
  const server = await startServer({
    ...pipelineSettings(config, prefix),
    redisUrl: REDIS_URL,
    dataDir: config.dataDir,
    entityId: config.entityId,
    uploadLimitBytes: config.uploadLimitBytes,
    trustProxy: config.trustProxy,
    webhookSecret: SECRET,
    client,
  });
  process.send?.({ url: server.url });
  process.once("disconnect", () => {
    void server.close(1000).then(() => client.close());
  });
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function startServerProcess(prefix: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(fileURLToPath(import.meta.url), ["--serve-prefix", prefix], {
    stdio: "inherit",
    // BENCH_SERVER_NODE_ARGS="--cpu-prof" profiles the server process.
    execArgv: (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean),
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (m) => resolve((m as { url: string }).url));
    child.once("exit", (code) => reject(new Error(`the server process exited (${code})`)));
  });
  return { child, url };
}

async function main(): Promise<void> {
  const total = Number(values.deliveries);
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(total) || total < 1 || !Number.isInteger(concurrency) || concurrency < 1) {
    process.stderr.write("usage: bench:webhooks [-- --deliveries N --concurrency C]\n");
    process.exit(2);
  }
  const prefix = `bench-webhooks-${randomBytes(4).toString("hex")}`;
  const { child, url } = await startServerProcess(prefix);
  const target = `${url}${WEBHOOK_PATH}`;

  // Bodies and signatures are made before the clock starts: the sender's cost is not the receiver's.
  const run = randomBytes(3).toString("hex");
  const bodies = Array.from({ length: total }, (_, i) => {
    const body = Buffer.from(
      JSON.stringify({
        event: i % 3 === 0 ? "api.payment.created" : "api.payment.updated",
        messageId: `msg_${run}_${i}`,
        id: `pay_${run}_${i}`,
        entityId: "ent_bench",
        occurredAt: new Date().toISOString(),
        externalId: `INV-${i}`,
        metadata: { payouts_batch: `bench_${run}`, payouts_row: `INV-${i}`, payouts_attempt: "1" },
      }),
    );
    return { body, signature: createHmac("sha256", SECRET).update(body).digest("hex") };
  });

  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 30_000, pipelining: 1 });
  const latencies = new Float64Array(total);
  let next = 0;
  let failures = 0;
  const send = async (i: number): Promise<void> => {
    const d = bodies[i] as { body: Buffer; signature: string };
    const started = performance.now();
    const res = await request(target, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json", "x-service-signature": d.signature },
      body: d.body,
    });
    await res.body.dump();
    latencies[i] = performance.now() - started;
    if (res.statusCode !== 202) failures++;
  };
  // Warm-up: open the connections (not counted).
  const warmup = Array.from({ length: concurrency }, (_, i) => ({
    body: Buffer.from(
      JSON.stringify({
        event: "api.limitation.updated",
        messageId: `warm_${run}_${i}`,
        id: "ent_bench",
        entityId: "ent_bench",
        occurredAt: new Date().toISOString(),
      }),
    ),
  }));
  await Promise.all(
    warmup.map(async ({ body }) => {
      const res = await request(target, {
        method: "POST",
        dispatcher: agent,
        headers: { "x-service-signature": createHmac("sha256", SECRET).update(body).digest("hex") },
        body,
      });
      await res.body.dump();
    }),
  );

  const cpuBefore = await cpuSecondsOf(child.pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) await send(i);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // The receiver's CPU per delivery: less noisy than throughput on a shared machine.
  const cpuUs = (((await cpuSecondsOf(child.pid)) - cpuBefore) / total) * 1e6;
  await agent.close();

  const redis = connectRedis(REDIS_URL);
  const queue = createReconcileQueue(redis, prefix);
  const counts = await queue.getJobCounts("waiting", "delayed", "prioritized");
  const queued = (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0);

  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.disconnect();
  await exited;
  await queue.obliterate({ force: true });
  await queue.close();
  let cursor = "0";
  do {
    const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = nextCursor;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
  await redis.quit();

  const sorted = latencies.slice().sort();
  const rate = total / seconds;
  process.stdout.write(
    [
      `webhook receiver: ${total} signed deliveries, concurrency ${concurrency}, keep-alive`,
      `  verified + queued   ${queued} jobs (${failures} non-202 answers)`,
      `  throughput          ${Math.round(rate)} deliveries/s (target >= 3000)`,
      `  latency p50 / p99   ${percentile(sorted, 50).toFixed(2)} ms / ${percentile(sorted, 99).toFixed(2)} ms`,
      `  receiver CPU        ${cpuUs.toFixed(0)} µs per delivery`,
      "",
    ].join("\n"),
  );
  if (queued !== total || failures > 0) process.exitCode = 1;
}

if (values["serve-prefix"]) {
  await serveChild(values["serve-prefix"]);
} else {
  await main();
}
