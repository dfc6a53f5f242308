/**
 * `npm run bench:redis-rows [-- --rows N]`: where Redis's bytes per row go. Runs the job as in
 * production (private redis-server, `payouts sandbox`, `payouts serve` with webhooks, `payouts submit`
 * of a generated N-row CSV, default 10,000), and measures Redis twice: right after `payouts submit`
 * with no worker running yet (every row queued, the first PAYOUTS_FEED_WINDOW of them as jobs: the
 * rest reach the queue as jobs finish), and after a `payouts worker` finished the batch. Each time it prints `used_memory` per row and
 * a table of `MEMORY USAGE` summed by key pattern (batch ids, row keys and job ids folded), with the
 * keys' encodings, so a change to how rows live in Redis can be judged by its bytes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { BatchStore } from "../src/batches/index.js";
import { startPrivateRedis } from "../src/demo/private-redis.js";
import { type Proc, startPayouts, stopProcess, waitForOutput } from "./lib/processes.js";
import { writeE2eSheet } from "./lib/write-bench-sheets.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "10000" },
  },
});
const ROWS = Number(values.rows);
const say = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

/** A key with its variable parts folded, so keys of one kind add up in one line. */
function keyPattern(key: string): string {
  return key
    .replace(/b\d{8}T\d{6}-[0-9a-f]{8}/g, "<batch>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<job>")
    .replace(/:row:.*$/, ":row:<key>")
    .replace(/:d\d+:/, ":d<day>:")
    .replace(/:\d{4}-\d{2}-\d{2}$/, ":<day>")
    .replace(/:\d+$/, ":<n>");
}

interface Group {
  keys: number;
  bytes: number;
  encodings: Map<string, number>;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info("memory"))?.[1] ?? 0);
}

async function breakdown(redis: Redis, label: string, base: number): Promise<void> {
  const groups = new Map<string, Group>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "COUNT", 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of keys) {
      pipeline.memory("USAGE", key, "SAMPLES", "0");
      pipeline.object("ENCODING", key);
    }
    const results = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const bytes = Number(results[i * 2]?.[1] ?? 0);
      const encoding = String(results[i * 2 + 1]?.[1] ?? "?");
      const pattern = keyPattern(key);
      const g = groups.get(pattern) ?? { keys: 0, bytes: 0, encodings: new Map() };
      g.keys++;
      g.bytes += bytes;
      g.encodings.set(encoding, (g.encodings.get(encoding) ?? 0) + 1);
      groups.set(pattern, g);
    });
  } while (cursor !== "0");
  const used = await usedMemory(redis);
  const total = [...groups.values()].reduce((s, g) => s + g.bytes, 0);
  await showSample(redis);
  say(`\n== ${label}: used_memory ${fmt(used)} B, ${fmt((used - base) / ROWS)} B per row over the start`);
  say(`   MEMORY USAGE of all keys ${fmt(total)} B = ${fmt(total / ROWS)} B per row`);
  say("| key pattern | keys | bytes | B per row | encodings |");
  say("|---|---:|---:|---:|---|");
  for (const [pattern, g] of [...groups.entries()].sort((a, b) => b[1].bytes - a[1].bytes)) {
    const enc = [...g.encodings.entries()].map(([e, n]) => `${e} ${n}`).join(", ");
    say(`| \`${pattern}\` | ${fmt(g.keys)} | ${fmt(g.bytes)} | ${(g.bytes / ROWS).toFixed(1)} | ${enc} |`);
  }
}

/** One row's records as stored, so their bytes can be read. */
async function showSample(redis: Redis): Promise<void> {
  const [, rowKeys] = await redis.scan("0", "MATCH", "*:row:*", "COUNT", 1000);
  const rowKey = rowKeys[0];
  if (rowKey) say(`sample ${rowKey}: ${JSON.stringify(await redis.hgetall(rowKey))}`);
  const [, statics] = await redis.scan("0", "MATCH", "*:rows", "COUNT", 1000);
  if (statics[0]) {
    const [, entry] = await redis.hscan(statics[0], "0", "COUNT", 1);
    say(`sample static record ${entry[0]}: ${entry[1]}`);
  }
  const [, jobs] = await redis.scan("0", "MATCH", "*:bull:payments:*-*-*", "COUNT", 1000);
  if (jobs[0]) say(`sample job ${jobs[0]}: ${JSON.stringify(await redis.hgetall(jobs[0]))}`);
}

const dataDir = await mkdtemp(path.join(tmpdir(), "payouts-redis-rows-"));
const redisServer = await startPrivateRedis();
const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
const procs: Proc[] = [];
say(`bench:redis-rows  rows ${fmt(ROWS)}  load ${loadavg()[0]!.toFixed(1)}`);
try {
  const sheet = path.join(dataDir, "sheet.csv");
  await writeE2eSheet(sheet, ROWS);
  const sandbox = startPayouts("sandbox", ["sandbox", "--port", "0"], { LOG_LEVEL: "warn" });
  procs.push(sandbox);
  const env = {
    REDIS_URL: redisServer.url,
    PAYOUTS_API_URL: await waitForOutput(sandbox, /base URL\s+(http\S+)/),
    PAYOUTS_API_KEY: await waitForOutput(sandbox, /API key\s+(\S+)/),
    DATA_DIR: dataDir,
    PAYOUTS_RATE_LIMIT_PER_SECOND: "100000",
    WORKER_CONCURRENCY: "32",
    LOG_LEVEL: "warn",
  };
  const serve = startPayouts("serve", ["serve", "--port", "0"], { ...env, LOG_LEVEL: "info" });
  procs.push(serve);
  const serveUrl = await waitForOutput(serve, /listening on (http\S+)/);
  const setup = startPayouts("webhook", ["webhook", "setup", "--url", `${serveUrl}/webhooks/payouts`], env);
  if ((await setup.exited) !== 0) throw new Error(`webhook setup failed: ${setup.stdout()}`);
  await sleep(500);
  const base = await usedMemory(redis);
  const submit = startPayouts("submit", ["submit", sheet], env);
  if ((await submit.exited) !== 0) throw new Error(`submit failed: ${submit.stdout()}`);
  const batchId = /\b(b\d{8}T\d{6}-[0-9a-f]+)\b/.exec(submit.stdout())?.[1];
  if (!batchId) throw new Error(`submit printed no batch id: ${submit.stdout()}`);
  await breakdown(redis, "after submit, no worker yet (every row queued)", base);

  let finished = false;
  const worker = startPayouts(
    "worker",
    ["worker", "--concurrency", "32"],
    { ...env, LOG_LEVEL: "info" },
    (line) => {
      if (line.includes('"batch finished"')) finished = true;
    },
  );
  procs.push(worker);
  const store = new BatchStore(redis);
  let peak = 0;
  const t0 = Date.now();
  let sentAt: number | undefined;
  while (!finished) {
    peak = Math.max(peak, await usedMemory(redis));
    if (sentAt === undefined && (await store.progress(batchId))?.counts.queued === 0) sentAt = Date.now();
    if (Date.now() - t0 > 30 * 60_000) throw new Error("the batch did not finish in 30 minutes");
    await sleep(500);
  }
  const progress = await store.progress(batchId);
  say(
    `\nfinished in ${((Date.now() - t0) / 1000).toFixed(1)} s: completed ${fmt(progress?.counts.completed ?? 0)}`,
  );
  if (sentAt !== undefined)
    say(`every row sent (none \`queued\`) after ${((sentAt - t0) / 1000).toFixed(1)} s`);
  say(
    `peak used_memory while paying: ${fmt(peak)} B = ${fmt((peak - base) / ROWS)} B per row over the start`,
  );
  await sleep(1000);
  await breakdown(redis, "after the batch finished", base);
  say(
    `\nload ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  for (const p of procs.reverse()) await stopProcess(p);
  redis.disconnect();
  await redisServer.stop();
  await rm(dataDir, { recursive: true, force: true });
}
