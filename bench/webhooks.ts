/**
 * `npm run bench:webhooks [-- --deliveries N --concurrency C]`: N signed webhook deliveries (default
 * 20,000) POSTed over keep-alive connections (undici, C at a time, default 64) to the receiver of
 * `payouts serve`, which runs in its own process as it would in production. Each delivery is
 * verified (HMAC over the raw bytes), deduplicated in Redis and marks its payment's row for a look
 * (each delivery here names a row of its own); the run checks that exactly N rows were marked. Prints deliveries per second and p50/p99 latency
 * (target ≥ 3,000/s on a 2-core machine).
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); its keys live under a unique prefix and
 * are deleted at the end.
 */
import { type ChildProcess, fork } from "node:child_process";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { pipelineSettings } from "../src/app/index.js";
import { loadConfig } from "../src/config/index.js";
import { createPayoutsClient } from "../src/payouts-api/index.js";
import { connectRedis } from "../src/pipeline/index.js";
import { LookIndex } from "../src/reconcile/index.js";
import { startServer, WEBHOOK_PATH } from "../src/server/index.js";
import { cpuSecondsOf } from "./lib/processes.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const SECRET = "whsec_bench_only_not_a_secret";

const { values } = parseArgs({
  options: {
    deliveries: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "64" },
    // Internal: run as the server process, or as the bare receiver.
    "serve-prefix": { type: "string" },
    bare: { type: "boolean", default: false },
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

/**
 * The bare loop beside the receiver: node:http alone checking the HMAC, parsing the JSON and answering
 * 202, with no Redis, no dedupe and no mark. What the receiver costs beyond it is ours.
 */
function bareChild(): void {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const expected = createHmac("sha256", SECRET).update(raw).digest();
      const given = Buffer.from(String(req.headers["x-service-signature"]), "hex");
      const signed = given.length === expected.length && timingSafeEqual(given, expected);
      const delivery = JSON.parse(raw.toString("utf8")) as { messageId?: string };
      const text = JSON.stringify({ status: signed && delivery.messageId ? "queued" : "refused" });
      res.writeHead(signed ? 202 : 401, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  server.listen(0, "127.0.0.1", () =>
    process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${WEBHOOK_PATH}` }),
  );
  process.once("disconnect", () => server.close());
}

async function startBareProcess(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(fileURLToPath(import.meta.url), ["--bare"], { stdio: "inherit" });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (m) => resolve((m as { url: string }).url));
    child.once("exit", (code) => reject(new Error(`the bare server process exited (${code})`)));
  });
  return { child, url };
}

/** Sends every body to `target`, C at a time over keep-alive; the receiving process's CPU per delivery. */
async function drive(
  target: string,
  bodies: readonly { body: Buffer; signature: string }[],
  concurrency: number,
  pid: number | undefined,
  run: string,
) {
  const total = bodies.length;
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
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      const body = Buffer.from(
        JSON.stringify({
          event: "api.limitation.updated",
          messageId: `warm_${run}_${i}`,
          id: "ent_bench",
          entityId: "ent_bench",
          occurredAt: new Date().toISOString(),
        }),
      );
      const res = await request(target, {
        method: "POST",
        dispatcher: agent,
        headers: { "x-service-signature": createHmac("sha256", SECRET).update(body).digest("hex") },
        body,
      });
      await res.body.dump();
    }),
  );
  const cpuBefore = await cpuSecondsOf(pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) await send(i);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // The receiver's CPU per delivery: less noisy than throughput on a shared machine.
  const cpuUs = (((await cpuSecondsOf(pid)) - cpuBefore) / total) * 1e6;
  await agent.close();
  return { seconds, cpuUs, latencies, failures };
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
  const batch = `bench_${run}`;
  const bodies = Array.from({ length: total }, (_, i) => {
    const body = Buffer.from(
      JSON.stringify({
        event: i % 3 === 0 ? "api.payment.created" : "api.payment.updated",
        messageId: `msg_${run}_${i}`,
        id: `pay_${run}_${i}`,
        entityId: "ent_bench",
        occurredAt: new Date().toISOString(),
        externalId: `INV-${i}`,
        metadata: { payouts_batch: batch, payouts_row: `INV-${i}`, payouts_attempt: "1" },
      }),
    );
    return { body, signature: createHmac("sha256", SECRET).update(body).digest("hex") };
  });

  const receiver = await drive(target, bodies, concurrency, child.pid, run);
  const { latencies, failures } = receiver;
  const bareServer = await startBareProcess();
  const bare = await drive(bareServer.url, bodies, concurrency, bareServer.child.pid, run);
  bareServer.child.kill();

  const redis = connectRedis(REDIS_URL);
  const marked = await new LookIndex(redis, prefix).pending(batch);

  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.disconnect();
  await exited;
  let cursor = "0";
  do {
    const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = nextCursor;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
  await redis.quit();

  const sorted = latencies.slice().sort();
  const rate = total / receiver.seconds;
  process.stdout.write(
    [
      `webhook receiver: ${total} signed deliveries, concurrency ${concurrency}, keep-alive`,
      `  verified + marked   ${marked} rows for a look (${failures} non-202 answers)`,
      `  throughput          ${Math.round(rate)} deliveries/s (target >= 3000)`,
      `  latency p50 / p99   ${percentile(sorted, 50).toFixed(2)} ms / ${percentile(sorted, 99).toFixed(2)} ms`,
      `  receiver CPU        ${receiver.cpuUs.toFixed(0)} µs per delivery`,
      `  bare node:http      ${bare.cpuUs.toFixed(0)} µs per delivery, ${Math.round(total / bare.seconds)} deliveries/s (HMAC check, JSON.parse, a 202; no Redis): the receiver costs ${(receiver.cpuUs / bare.cpuUs).toFixed(1)}×`,
      "",
    ].join("\n"),
  );
  if (marked !== total || failures > 0) process.exitCode = 1;
}

if (values["serve-prefix"]) {
  await serveChild(values["serve-prefix"]);
} else if (values.bare) {
  bareChild();
} else {
  await main();
}
