/**
 * Crash safety with real processes (dist/ must be built: `npm test` builds it first). The sandbox and
 * the worker run as their own processes; the worker is killed with SIGKILL at random moments while
 * the sandbox drops responses of payments it stored; then Redis loses everything mid-batch and
 * `payouts recover` rebuilds the batch. In every case: exactly one payment per row.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SubmittedInstruction, submitBatch } from "../../../src/batches/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { openPipeline, type Pipeline } from "../../../src/pipeline/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import {
  deleteKeys,
  instruction,
  paymentsOfBatch,
  REDIS_URL,
  sha,
  uniquePrefix,
  waitForRows,
} from "./helpers.js";
import { type CliProcess, setRemoteFaults, spawnCli, spawnSandbox, stopProcess } from "./processes.js";

/** The Redis-loss test flushes this database, and only this one. */
const LOSS_DB = 12;
const LOSS_REDIS_URL = `${REDIS_URL.replace(/\/\d+$/, "")}/${LOSS_DB}`;

let sandbox: Awaited<ReturnType<typeof spawnSandbox>>;
let api: PayoutsClient;
let dataDir: string;

beforeAll(async () => {
  sandbox = await spawnSandbox();
  api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-crash-"));
});

afterAll(async () => {
  await api?.close();
  if (sandbox) await stopProcess(sandbox.proc);
  await rm(dataDir, { recursive: true, force: true });
});

function rows(n: number): SubmittedInstruction[] {
  return Array.from({ length: n }, (_, i) =>
    i % 5 === 4
      ? instruction({
          receivingAccountId: "acct_supplier_eur",
          deliveryPreference: "international-fx",
          currency: "EUR",
          amount: 20_000 + i,
        })
      : instruction({ amount: 30_000 + i }),
  );
}

function startWorker(redisUrl: string, prefix: string): CliProcess {
  return spawnCli(
    [
      "worker",
      "--concurrency",
      "16",
      "--rate-limit",
      "100000",
      "--lock-ms",
      "1500",
      "--redis-prefix",
      prefix,
    ],
    {
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      REDIS_URL: redisUrl,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
    },
  );
}

async function submit(pipeline: Pipeline, instructions: SubmittedInstruction[]): Promise<string> {
  const result = await submitBatch({
    store: pipeline.store,
    enqueuer: pipeline.enqueuer,
    instructions,
    fileSha256: sha(),
    sourceName: "crash.csv",
    entityId: "me",
    dataDir,
  });
  return result.batchId;
}

/** One payment per row, found in the ledger by the batch's metadata. */
async function expectOnePaymentPerRow(batchId: string, instructions: SubmittedInstruction[]): Promise<void> {
  const payments = await paymentsOfBatch(api, batchId);
  const perRow = new Map<string, number>();
  for (const p of payments)
    perRow.set(p.metadata!.payouts_row!, (perRow.get(p.metadata!.payouts_row!) ?? 0) + 1);
  const duplicates = [...perRow].filter(([, n]) => n > 1);
  expect(duplicates).toEqual([]);
  expect(payments).toHaveLength(instructions.length);
  expect(new Set(perRow.keys())).toEqual(new Set(instructions.map((i) => i.rowKey)));
}

const settled = (r: { state: string }) =>
  ["submitted", "in-progress", "completed", "failed"].includes(r.state);

describe("crash safety with real processes", () => {
  it("survives kill -9 of the worker at random moments while responses are lost: one payment per row", async () => {
    const prefix = uniquePrefix("crash");
    const pipeline = openPipeline({
      ...PIPELINE_DEFAULTS,
      redisUrl: REDIS_URL,
      prefix,
      jobs: { attempts: 8, backoffMs: 200 },
    });
    try {
      await setRemoteFaults(sandbox.url, sandbox.apiKey, { dropAfterStoreRate: 0.15, errorRate5xx: 0.03 });
      const instructions = rows(500);
      const batchId = await submit(pipeline, instructions);

      for (let kill = 0; kill < 4; kill++) {
        const worker = startWorker(REDIS_URL, prefix);
        await worker.waitFor(/payment worker ready/);
        await sleep(100 + Math.floor(Math.random() * 500));
        expect(await stopProcess(worker, "SIGKILL")).toBe("SIGKILL");
      }
      // The killed workers did part of the batch: the kills landed in the middle of the work.
      const beforeLast = await pipeline.store.progress(batchId);
      expect(beforeLast!.counts.queued).toBeLessThan(500);
      const last = startWorker(REDIS_URL, prefix);
      await last.waitFor(/payment worker ready/);
      const done = await waitForRows(pipeline.store, batchId, settled, 45_000);
      // Graceful shutdown: SIGTERM ends the worker with exit code 0.
      expect(await stopProcess(last, "SIGTERM")).toBe(0);

      expect(done).toHaveLength(500);
      await expectOnePaymentPerRow(batchId, instructions);
      for (const row of done) expect(row.paymentId).toMatch(/^pay_/);
    } finally {
      await setRemoteFaults(sandbox.url, sandbox.apiKey, { dropAfterStoreRate: 0, errorRate5xx: 0 });
      await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(pipeline.redis, prefix);
      await pipeline.close();
    }
  }, 90_000);

  it("on SIGTERM stops taking jobs, lets in-flight payments finish, and exits 0", async () => {
    const prefix = uniquePrefix("shutdown");
    const pipeline = openPipeline({
      ...PIPELINE_DEFAULTS,
      redisUrl: REDIS_URL,
      prefix,
      jobs: { attempts: 8, backoffMs: 200 },
    });
    const worker = spawnCli(
      ["worker", "--concurrency", "3", "--redis-prefix", prefix, "--shutdown-grace-ms", "5000"],
      {
        PAYOUTS_API_URL: sandbox.url,
        PAYOUTS_API_KEY: sandbox.apiKey,
        REDIS_URL,
        DATA_DIR: dataDir,
      },
    );
    try {
      await worker.waitFor(/payment worker ready/);
      // Each payment takes about a second, so three are in flight when the signal comes.
      await setRemoteFaults(sandbox.url, sandbox.apiKey, { latencyMs: 1000 });
      const batchId = await submit(pipeline, rows(9));
      while ((await pipeline.queue.getActiveCount()) === 0) await sleep(20);
      expect(await stopProcess(worker, "SIGTERM")).toBe(0);
      const progress = await pipeline.store.progress(batchId);
      // The in-flight payments finished (none aborted into `error`); the rest wait for the next worker.
      expect(progress!.counts.submitted).toBeGreaterThanOrEqual(1);
      expect(progress!.counts.submitted).toBeLessThan(9);
      expect(progress!.counts.submitted + progress!.counts.queued).toBe(9);
      expect(worker.output.some((l) => l.includes("payment worker stopped"))).toBe(true);
    } finally {
      await setRemoteFaults(sandbox.url, sandbox.apiKey, { latencyMs: 0 });
      await stopProcess(worker, "SIGKILL");
      await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(pipeline.redis, prefix);
      await pipeline.close();
    }
  }, 30_000);

  it("rebuilds a batch after Redis lost everything mid-batch (`payouts recover`) and pays nothing twice", async () => {
    const prefix = uniquePrefix("loss");
    const flusher = new Redis(LOSS_REDIS_URL, { maxRetriesPerRequest: null });
    await flusher.flushdb();
    const pipeline = openPipeline({
      ...PIPELINE_DEFAULTS,
      redisUrl: LOSS_REDIS_URL,
      prefix,
      jobs: { attempts: 8, backoffMs: 200 },
    });
    const worker = startWorker(LOSS_REDIS_URL, prefix);
    try {
      await worker.waitFor(/payment worker ready/, 120_000);
      await setRemoteFaults(sandbox.url, sandbox.apiKey, { latencyMs: [2, 10] });
      const instructions = rows(300);
      const batchId = await submit(pipeline, instructions);
      // Let part of the batch be paid, then lose every key of this Redis database.
      for (;;) {
        const progress = await pipeline.store.progress(batchId);
        if (progress && progress.counts.submitted >= 60) break;
        await sleep(20);
      }
      await flusher.flushdb();
      expect(await pipeline.store.getBatch(batchId)).toBeUndefined();

      const recover = spawnCli(["recover", batchId, "--redis-prefix", prefix], {
        PAYOUTS_API_URL: sandbox.url,
        PAYOUTS_API_KEY: sandbox.apiKey,
        REDIS_URL: LOSS_REDIS_URL,
        DATA_DIR: dataDir,
      });
      // Recovery asks the ledger about all 300 rows: under load that takes a while. Wait for the
      // process to end (the real condition), not for a line within a fixed time.
      expect(await recover.exited, recover.output.join("\n")).toBe(0);
      const summary = recover.output.find((l) => /recovered batch/.test(l));
      expect(summary, recover.output.join("\n")).toBeDefined();
      const adopted = Number(/(\d+) adopted/.exec(summary!)![1]);
      expect(adopted).toBeGreaterThanOrEqual(60);

      const done = await waitForRows(pipeline.store, batchId, settled, 180_000);
      expect(done).toHaveLength(300);
      await expectOnePaymentPerRow(batchId, instructions);
    } finally {
      await setRemoteFaults(sandbox.url, sandbox.apiKey, { latencyMs: 0 });
      await stopProcess(worker);
      await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(pipeline.redis, prefix);
      await pipeline.close();
      await flusher.quit();
    }
  }, 420_000);
});
