/**
 * Scale out on BullMQ and Redis: three `payouts worker` processes on one Redis
 * pay one batch together, exactly once per row, and each stops cleanly.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instruction, type PipelineHarness, paymentsOfBatch, pipelineHarness } from "../pipeline/helpers.js";
import { type CliProcess, spawnCli } from "../pipeline/processes.js";

const ROWS = 150;
let sandbox: RunningSandbox;
let h: PipelineHarness;
let dataDir: string;
const workers: CliProcess[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 100, toFinalMs: 100 } });
  h = await pipelineHarness(sandbox, "three-workers");
  dataDir = await mkdtemp(path.join(os.tmpdir(), "payouts-three-"));
});
afterAll(async () => {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
  await h.close();
  await sandbox.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("three worker processes on one Redis", () => {
  it("pay one batch together, exactly once per row, and stop cleanly", async () => {
    const env = {
      REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      PAYOUTS_API_URL: sandbox.url,
      PAYOUTS_API_KEY: sandbox.apiKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      PAYOUTS_RATE_LIMIT_PER_SECOND: "100000",
    };
    for (let i = 0; i < 3; i++) {
      workers.push(spawnCli(["worker", "--redis-prefix", h.prefix, "--concurrency", "8"], env));
    }
    // All three take jobs from the start (under load one could still be starting when the rows are paid).
    await Promise.all(workers.map((w) => w.waitFor(/payment worker ready/, 60_000)));
    // No webhooks here (rows stay `submitted`): what matters is one payment per row from one of three.
    const rows = Array.from({ length: ROWS }, (_, i) => instruction({ amount: 30_000 + i * 100 }));
    const batchId = await h.submit(rows);
    const deadline = Date.now() + 90_000;
    for (;;) {
      const progress = await h.store.progress(batchId);
      if (progress && progress.counts.queued === 0) break;
      if (Date.now() > deadline) throw new Error(`rows still queued: ${JSON.stringify(progress?.counts)}`);
      await sleep(200);
    }
    // Every worker stops on SIGTERM with exit 0, at once: the last rows' result-file writes are still
    // pending then, and must be made on the way out.
    for (const w of workers) w.child.kill("SIGTERM");
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0, 0]);
    const payments = await paymentsOfBatch(h.api, batchId);
    expect(payments).toHaveLength(ROWS);
    expect(new Set(payments.map((p) => p.metadata?.payouts_row)).size).toBe(ROWS);
    expect(sandbox.stats().idempotency.keysReusedWithDifferentRequest).toBe(0);
    const recorded = await h.store.listRows(batchId);
    expect(recorded.every((r) => r.paymentId !== undefined && r.attempt === 1)).toBe(true);
    expect(new Set(recorded.map((r) => r.paymentId)).size).toBe(ROWS);

    // The result file in the outbox, written by whichever worker wrote last, shows every row as paid.
    const file = (await readdir(path.join(dataDir, "outbox"))).find((f) => f.includes(batchId));
    expect(file).toBeDefined();
    const lines = (await readFile(path.join(dataDir, "outbox", file ?? ""), "utf8")).trim().split(/\r?\n/);
    expect(lines).toHaveLength(ROWS + 1);
    const status = lines[0]?.split(",").indexOf("status") ?? -1;
    expect(lines.slice(1).map((l) => l.split(",")[status])).toEqual(Array(ROWS).fill("submitted"));
  }, 150_000);
});
