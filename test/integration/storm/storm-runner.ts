/**
 * The storm itself, shared by the short test and `npm run soak`: everything real (worker processes of
 * the built CLI, a private redis-server, the sandbox over HTTP behind a logging proxy), everything
 * bounded (it stops by itself), everything it started is stopped.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { type SubmittedInstruction, submitBatch } from "../../../src/batches/index.js";
import { createPayoutsClient } from "../../../src/payouts-api/index.js";
import { openPipeline } from "../../../src/pipeline/index.js";
import { retryRows } from "../../../src/retries/index.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import { instruction, sha } from "../pipeline/helpers.js";
import { BIN } from "../pipeline/processes.js";
import { startHoldingProxy } from "./holding-proxy.js";

export interface StormOptions {
  rows: number;
  /** How long faults, kills and retries go on. */
  chaosMs: number;
  workers: number;
  seed: number;
}

export interface StormReport {
  rows: number;
  paidRows: number;
  faultsInjected: number;
  kills: number;
  redisRestarts: number;
  retriesStarted: number;
  keysWithTwoBodies: string[];
  problems: string[];
}

/** A small deterministic PRNG (mulberry32), so a failing storm can be replayed with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function startRedis(port: number, dir: string): ChildProcess {
  return spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--dir",
      dir,
      "--maxmemory-policy",
      "noeviction",
    ],
    { stdio: "ignore" },
  );
}

async function untilRedisAnswers(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch {
      probe.disconnect();
      await sleep(100);
    }
  }
  throw new Error("the private redis-server did not start");
}

function rowsFor(n: number): SubmittedInstruction[] {
  return Array.from({ length: n }, (_, i) => {
    // Amounts never end in 13 or 77 (the sandbox's failing and held triggers).
    const amount = 10_000 + i * 10;
    return i % 5 === 4
      ? instruction({
          receivingAccountId: "acct_supplier_eur",
          deliveryPreference: "international-fx",
          currency: "EUR",
          amount,
        })
      : instruction({ amount });
  });
}

export async function runStorm(options: StormOptions): Promise<StormReport> {
  const random = prng(options.seed);
  const dir = await mkdtemp(path.join(tmpdir(), "payouts-storm-"));
  const redisPort = await freePort();
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  let redis = startRedis(redisPort, dir);
  await untilRedisAnswers(redisUrl);
  const sandbox = await startSandbox({ clock: { toInProgressMs: 300, toFinalMs: 300 } });
  const proxy = await startHoldingProxy(sandbox.url);
  const ledger = createPayoutsClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const prefix = `storm-${options.seed}`;
  const pipeline = openPipeline({ redisUrl, prefix, jobs: { attempts: 4, backoffMs: 200 } });
  pipeline.redis.on("error", () => undefined);
  pipeline.queue.on("error", () => undefined);
  const restartRedis = async () => {
    const exited = new Promise((r) => {
      if (redis.exitCode !== null || redis.signalCode !== null) r(undefined);
      else redis.once("exit", r);
    });
    redis.kill("SIGTERM"); // redis-server shuts down cleanly on SIGTERM (AOF is fsynced on every write)
    await exited;
    redis = startRedis(redisPort, dir);
  };
  const report: StormReport = {
    rows: options.rows,
    paidRows: 0,
    faultsInjected: 0,
    kills: 0,
    redisRestarts: 0,
    retriesStarted: 0,
    keysWithTwoBodies: [],
    problems: [],
  };
  const workers: ChildProcess[] = [];
  const spawnWorker = () =>
    spawn(
      process.execPath,
      [
        BIN,
        "worker",
        "--concurrency",
        "4",
        "--lock-ms",
        "1500",
        "--redis-prefix",
        prefix,
        "--shutdown-grace-ms",
        "2000",
      ],
      {
        env: {
          ...process.env,
          PAYOUTS_API_URL: proxy.url,
          PAYOUTS_API_KEY: sandbox.apiKey,
          PAYOUTS_API_TIMEOUT_MS: "2000",
          REDIS_URL: redisUrl,
          DATA_DIR: dir,
          LOG_LEVEL: "silent",
        },
        stdio: "ignore",
      },
    );
  try {
    const rows = rowsFor(options.rows);
    const { batchId } = await submitBatch({
      store: pipeline.store,
      enqueuer: pipeline.enqueuer,
      instructions: rows,
      fileSha256: sha(),
      sourceName: "storm.csv",
      entityId: "me",
      dataDir: dir,
    });
    for (let i = 0; i < options.workers; i++) workers.push(spawnWorker());

    const faultsAt = () => ({
      latencyMs: [0, 400] as [number, number],
      errorRate5xx: 0.15,
      rateLimitRate: 0.05,
      dropAfterStoreRate: 0.1,
      duplicateWebhookRate: 0.3,
      shuffleWebhooks: true,
    });
    sandbox.setFaults(faultsAt());
    const chaosEnd = Date.now() + options.chaosMs;
    let restarted = false;
    while (Date.now() < chaosEnd) {
      await sleep(1_000 + random() * 2_000);
      const dice = random();
      report.faultsInjected++;
      if (dice < 0.4) {
        // kill -9 a worker at a random moment, start another in its place
        const i = Math.floor(random() * workers.length);
        workers[i]?.kill("SIGKILL");
        report.kills++;
        workers[i] = spawnWorker();
      } else if (dice < 0.6 && !restarted) {
        // Redis restarts (AOF keeps its data, as in production); everybody reconnects
        restarted = true;
        await restartRedis();
        await untilRedisAnswers(redisUrl);
        report.redisRestarts++;
      } else {
        // an operator retry at a random moment (rows still in doubt are left alone, with the reason)
        const result = await retryRows({
          store: pipeline.store,
          enqueuer: pipeline.enqueuer,
          batchId,
          ledger,
        }).catch(() => undefined);
        if (result?.kind === "done") report.retriesStarted += result.retried.length;
      }
    }
    if (!restarted) {
      await restartRedis();
      await untilRedisAnswers(redisUrl);
      report.redisRestarts++;
    }
    // Calm: no more faults; errored rows are retried (once their last request can no longer land).
    sandbox.setFaults({ latencyMs: 0, errorRate5xx: 0, rateLimitRate: 0, dropAfterStoreRate: 0 });
    const settleEnd = Date.now() + 120_000;
    for (;;) {
      const current = await pipeline.store.listRows(batchId).catch(() => []);
      const open = current.filter((r) => !r.paymentId);
      if (current.length === rows.length && open.length === 0) break;
      if (Date.now() > settleEnd) {
        report.problems.push(
          `rows without a payment after the storm: ${open.map((r) => `${r.rowKey}:${r.state}`).join(", ")}`,
        );
        break;
      }
      if (open.some((r) => r.state === "error" || r.state === "rejected")) {
        const result = await retryRows({
          store: pipeline.store,
          enqueuer: pipeline.enqueuer,
          batchId,
          ledger,
        }).catch(() => undefined);
        if (result?.kind === "done") report.retriesStarted += result.retried.length;
      }
      await sleep(500);
    }

    // The ledger decides: one live payment per row across all attempts, at the sheet's amount.
    const byRow = new Map<string, { id: string; amount: number; status: string }[]>();
    for await (const p of ledger.payments.listAll({ metadata: { payouts_batch: batchId } })) {
      const key = p.metadata?.payouts_row ?? "?";
      const list = byRow.get(key) ?? [];
      list.push({ id: p.id, amount: p.amount, status: p.status });
      byRow.set(key, list);
    }
    const recorded = new Map((await pipeline.store.listRows(batchId)).map((r) => [r.rowKey, r]));
    for (const row of rows) {
      const live = (byRow.get(row.rowKey) ?? []).filter(
        (p) => p.status !== "failed" && p.status !== "canceled",
      );
      if (live.length !== 1) {
        report.problems.push(
          `row ${row.rowKey}: ${live.length} live payments (${live.map((p) => p.id).join(", ")})`,
        );
        continue;
      }
      const [payment] = live;
      if (payment!.amount !== row.amount)
        report.problems.push(`row ${row.rowKey}: paid ${payment!.amount}, the sheet says ${row.amount}`);
      const record = recorded.get(row.rowKey);
      if (record?.paymentId !== payment!.id)
        report.problems.push(
          `row ${row.rowKey}: the row records ${record?.paymentId}, the ledger ${payment!.id}`,
        );
      else report.paidRows++;
    }
    report.keysWithTwoBodies = proxy.keysWithTwoBodies();
    return report;
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    await pipeline.close().catch(() => undefined);
    await ledger.close();
    await proxy.close();
    await sandbox.close();
    redis.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
}
