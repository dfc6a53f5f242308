/**
 * Batches reach the queue a window at a time (src/batches/batch-feeder.ts): a
 * batch larger than the window is paid exactly once per row while no more than the window's rows
 * wait in jobs; a worker that stops after its jobs finished and before it topped the feed up, or is killed
 * (a real process), leaves a feed the next worker finishes; two workers feeding one batch pay no row
 * twice; a resumed submission finishes through its feed. Real Redis, real sandbox, real workers.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SubmittedInstruction, submitBatch } from "../../../src/batches/index.js";
import {
  createPaymentProcessor,
  createPaymentWorker,
  createWorkerClient,
  type Pipeline,
  rowsOfJob,
} from "../../../src/pipeline/index.js";
import { connectRedis } from "../../../src/redis/index.js";
import type { PipelineHarness } from "./helpers.js";
import * as helpers from "./helpers.js";
import { type CliProcess, spawnCli, stopProcess } from "./processes.js";

/** Small, so that every batch here is many windows long. */
const WINDOW = 20;

let sandbox: RunningSandbox;
let dataDir: string;
const harnesses: PipelineHarness[] = [];
const processes: CliProcess[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 100, toFinalMs: 100 } });
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-feed-"));
});
afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  for (const h of harnesses) await h.close();
  await sandbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function harness(label: string): Promise<PipelineHarness> {
  const h = await helpers.pipelineHarness(sandbox, label, { feedWindow: WINDOW });
  harnesses.push(h);
  return h;
}

function rows(n: number): SubmittedInstruction[] {
  return Array.from({ length: n }, (_, i) => helpers.instruction({ amount: 30_000 + i }));
}

/** Submits through the real path: the submitter's own feed hands the first window to the queue. */
async function submit(pipeline: Pipeline, instructions: SubmittedInstruction[]): Promise<string> {
  const result = await submitBatch({
    store: pipeline.store,
    enqueuer: pipeline.enqueuer,
    gate: pipeline.gate,
    instructions,
    fileSha256: helpers.sha(),
    sourceName: "feed.csv",
    entityId: "me",
    dataDir,
  });
  expect(result.enqueued).toBe(instructions.length);
  return result.batchId;
}

/** A fresh pipeline with one batch of `n` rows submitted. */
async function submitted(label: string, n: number): Promise<{ h: PipelineHarness; batchId: string }> {
  const h = await harness(label);
  return { h, batchId: await submit(h.pipeline, rows(n)) };
}

/** Rows in jobs added and not started: what the window bounds. */
async function backlog(pipeline: Pipeline): Promise<number> {
  const jobs = await pipeline.queue.getJobs(["wait", "prioritized", "delayed"]);
  return jobs.reduce((sum, job) => sum + (job ? rowsOfJob(job.data).length : 0), 0);
}

/** One payment per row in the ledger (by the batch's metadata), and no key sent with two bodies. */
async function expectOnePaymentPerRow(h: PipelineHarness, batchId: string, n: number): Promise<void> {
  const payments = await helpers.paymentsOfBatch(h.api, batchId);
  const perRow = new Map<string, number>();
  for (const p of payments) {
    const row = p.metadata?.payouts_row ?? "";
    perRow.set(row, (perRow.get(row) ?? 0) + 1);
  }
  expect([...perRow].filter(([, count]) => count > 1)).toEqual([]);
  expect(payments).toHaveLength(n);
  expect(new Set(payments.map((p) => p.externalId)).size).toBe(n);
  expect(sandbox.stats().idempotency.keysReusedWithDifferentRequest).toBe(0);
}

const paid = (r: { state: string }) => r.state !== "queued";

/** Waits until no row of the batch is `queued` any more, then checks one payment per row. */
async function expectPaidOnce(h: PipelineHarness, batchId: string, n: number): Promise<void> {
  await helpers.waitForRows(h.store, batchId, paid, 60_000);
  await expectOnePaymentPerRow(h, batchId, n);
}

describe("feeding a batch to the queue a window at a time", () => {
  it("pays a batch of many windows exactly once per row, never more than the window waiting", async () => {
    const n = 400;
    const { h, batchId } = await submitted("feed-window", n);
    // Before any worker: the first window only, every row still `queued` (status does not change).
    expect(await backlog(h.pipeline)).toBe(WINDOW);
    expect((await h.store.progress(batchId))?.counts.queued).toBe(n);
    expect(await h.pipeline.redis.sismember(h.store.keys.feeding, batchId)).toBe(1);

    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, await backlog(h.pipeline));
        await sleep(5);
      }
    })();
    await h.startWorker();
    await helpers.waitForRows(h.store, batchId, paid, 60_000);
    sampling = false;
    await sampler;

    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(WINDOW);
    await expectOnePaymentPerRow(h, batchId, n);
    // Fed to the end: off the feeding list.
    await expect.poll(() => h.pipeline.redis.sismember(h.store.keys.feeding, batchId)).toBe(0);
  }, 90_000);

  it("a worker that stopped after its jobs finished, before it topped the feed up: the next one finishes the batch", async () => {
    const n = 3 * WINDOW;
    const { h, batchId } = await submitted("feed-stall", n);
    // A bare BullMQ worker (no feed loop): it pays the first window and then nobody tops up, exactly
    // as if the process died between its jobs finishing and its top-up.
    const connection = connectRedis(helpers.REDIS_URL);
    const bare = createPaymentWorker({
      connection,
      prefix: h.prefix,
      processor: createPaymentProcessor({
        store: h.store,
        client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
      }),
      concurrency: 8,
    });
    await expect
      .poll(async () => (await h.store.progress(batchId))?.counts.queued, { timeout: 20_000 })
      .toBe(n - WINDOW);
    await bare.close();
    connection.disconnect();
    expect(await backlog(h.pipeline)).toBe(0);
    expect((await h.store.progress(batchId))?.counts.queued).toBe(n - WINDOW);

    await h.startWorker();
    await expectPaidOnce(h, batchId, n);
  }, 90_000);

  it("two workers feeding one batch pay no row twice", async () => {
    const n = 300;
    const { h, batchId } = await submitted("feed-two", n);
    await Promise.all([h.startWorker(), h.startWorker()]);
    await expectPaidOnce(h, batchId, n);
  }, 90_000);

  it("a worker process killed mid-batch (SIGKILL) leaves a feed the next worker process finishes", async () => {
    const n = 300;
    const { h, batchId } = await submitted("feed-kill", n);
    const env = {
      REDIS_URL: helpers.REDIS_URL,
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      PAYOUTS_RATE_LIMIT_PER_SECOND: "100000",
      PAYOUTS_FEED_WINDOW: String(WINDOW),
    };
    const args = ["worker", "--redis-prefix", h.prefix, "--concurrency", "4", "--lock-ms", "1500"];
    const first = spawnCli(args, env);
    processes.push(first);
    await first.waitFor(/payment worker ready/, 60_000);
    // Killed once it has paid a few windows but well before the end.
    await expect
      .poll(async () => (await h.store.progress(batchId))?.counts.queued ?? n, {
        timeout: 30_000,
        interval: 20,
      })
      .toBeLessThanOrEqual(n - 3 * WINDOW);
    expect(await stopProcess(first, "SIGKILL")).toBe("SIGKILL");
    const left = (await h.store.progress(batchId))?.counts.queued ?? 0;
    expect(left).toBeGreaterThan(0);

    const second = spawnCli(args, env);
    processes.push(second);
    await second.waitFor(/payment worker ready/, 60_000);
    await expectPaidOnce(h, batchId, n);
    expect(await stopProcess(second, "SIGTERM")).toBe(0);
  }, 150_000);

  it("a submission interrupted after its first window is finished by a starting worker, through its feed", async () => {
    const h = await harness("feed-resume");
    const n = 5 * WINDOW;
    let calls = 0;
    await expect(
      submitBatch({
        store: h.store,
        // Hands over the first window, then "crashes" (its backlog says 0, so it is asked for more).
        enqueuer: {
          window: WINDOW,
          backlog: async () => 0,
          enqueue: async (jobs) => {
            if (calls++ > 0) throw new Error("simulated crash while enqueueing");
            await h.pipeline.enqueuer.enqueue(jobs);
          },
        },
        instructions: rows(n),
        fileSha256: helpers.sha(),
        sourceName: "resume.csv",
        entityId: "me",
        dataDir,
      }),
    ).rejects.toThrow(/simulated crash/);
    const [batch] = await h.store.latestBatches(1);
    expect(batch?.enqueueComplete).toBe(false);
    const service = await h.startWorker();
    expect(service.resumed).toContain(batch!.id);
    await expectPaidOnce(h, batch!.id, n);
  }, 90_000);
});
