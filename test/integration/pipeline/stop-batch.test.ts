/**
 * Stopping a batch with real processes (dist/ must be built): the sandbox and the worker run as their
 * own processes, `payouts pause|resume|cancel` as an operator runs them. A paused batch sends nothing
 * new (counted at the sandbox) and a resume pays every row once; a cancel marks the rows never sent and
 * cancels the payments still scheduled, and the result file says so; a row a cancel marked is paid
 * when an operator retries it; the circuit breaker pauses a batch whose rows keep being refused with
 * one code and says so at NOTIFY_URL.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readStop } from "../../../src/batch-control/index.js";
import { type RowState, type SubmittedInstruction, submitBatch } from "../../../src/batches/index.js";
import { createPayoutsClient, type PayoutsClient } from "../../../src/payouts-api/index.js";
import { openPipeline, type Pipeline } from "../../../src/pipeline/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { deleteKeys, instruction, paymentsOfBatch, REDIS_URL, sha, uniquePrefix } from "./helpers.js";
import { type CliProcess, spawnCli, spawnSandbox, stopProcess } from "./processes.js";

let sandbox: Awaited<ReturnType<typeof spawnSandbox>>;
let api: PayoutsClient;
let dataDir: string;
let notifications: Array<{ type: string; data: Record<string, unknown> }>;
let notifyServer: Server;
let notifyUrl: string;

beforeAll(async () => {
  sandbox = await spawnSandbox();
  api = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-stop-"));
  notifications = [];
  notifyServer = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      notifications.push(JSON.parse(body) as { type: string; data: Record<string, unknown> });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => notifyServer.listen(0, "127.0.0.1", resolve));
  notifyUrl = `http://127.0.0.1:${(notifyServer.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await api?.close();
  if (sandbox) await stopProcess(sandbox.proc);
  await new Promise((resolve) => notifyServer?.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const env = (extra: Record<string, string> = {}) => ({
  PAYOUTS_API_URL: sandbox.url,
  PAYOUTS_API_KEY: sandbox.apiKey,
  REDIS_URL,
  DATA_DIR: dataDir,
  LOG_LEVEL: "info",
  ...extra,
});

async function setUp(label: string): Promise<{ prefix: string; pipeline: Pipeline }> {
  const prefix = uniquePrefix(label);
  const pipeline = openPipeline({ ...PIPELINE_DEFAULTS, redisUrl: REDIS_URL, prefix });
  cleanups.push(async () => {
    await deleteKeys(pipeline.redis, prefix);
    await pipeline.close();
  });
  return { prefix, pipeline };
}

async function startWorker(
  prefix: string,
  rate: number,
  extra: Record<string, string> = {},
): Promise<CliProcess> {
  const worker = spawnCli(
    ["worker", "--concurrency", "2", "--rate-limit", String(rate), "--redis-prefix", prefix],
    env(extra),
  );
  cleanups.push(() => stopProcess(worker));
  await worker.waitFor(/payment worker ready/, 30_000);
  return worker;
}

async function operator(args: string[], prefix: string): Promise<{ code: number | string; text: string }> {
  const p = spawnCli([...args, "--redis-prefix", prefix], env({ LOG_LEVEL: "warn" }));
  const code = await p.exited;
  return { code, text: p.output.join("\n") };
}

async function submit(pipeline: Pipeline, instructions: SubmittedInstruction[]): Promise<string> {
  const result = await submitBatch({
    store: pipeline.store,
    enqueuer: pipeline.enqueuer,
    instructions,
    fileSha256: sha(),
    sourceName: "stop.csv",
    entityId: "me",
    dataDir,
  });
  return result.batchId;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function counts(pipeline: Pipeline, batchId: string): Promise<Record<RowState, number>> {
  return (await pipeline.store.progress(batchId))!.counts;
}

/** Amounts the sandbox completes (none ends in 13, 77 or 555). */
const plain = (i: number) => instruction({ amount: 40_000 + i * 100 });

describe("stopping a batch", () => {
  it("pause: no new payment is created while paused; resume pays every row exactly once", async () => {
    const { prefix, pipeline } = await setUp("pause");
    // Enough rows that some are still unsent when the pause lands: at 5 rows/s these take 12 s to send,
    // and starting the `payouts pause` process on a loaded machine takes seconds of that.
    const rows = Array.from({ length: 60 }, (_, i) => plain(i));
    const batchId = await submit(pipeline, rows);
    await startWorker(prefix, 5);
    await until("a few rows sent", async () =>
      (await counts(pipeline, batchId)).queued <= 26 ? true : undefined,
    );

    const paused = await operator(["pause", batchId, "--reason", "wrong sheet?"], prefix);
    expect(paused.code, paused.text).toBe(0);
    // Every job of the batch that was already in the queue runs while it is paused (and sends nothing).
    await until("the queue drained", async () =>
      (await pipeline.queue.getJobCountByTypes("wait", "delayed", "active", "prioritized")) === 0
        ? true
        : undefined,
    );
    const madeWhilePaused = (await paymentsOfBatch(api, batchId)).length;
    const stillQueued = (await counts(pipeline, batchId)).queued;
    expect(stillQueued).toBeGreaterThan(0);
    expect(madeWhilePaused + stillQueued).toBe(rows.length);
    // The worker's feed ticks (every 2 s) pass the paused batch over: still nothing new at the sandbox.
    await sleep(2_500);
    expect((await paymentsOfBatch(api, batchId)).length).toBe(madeWhilePaused);
    expect((await counts(pipeline, batchId)).queued).toBe(stillQueued);
    expect((await readStop(pipeline.store, batchId)).paused).toMatchObject({ reason: "wrong sheet?" });

    const resumed = await operator(["resume", batchId], prefix);
    expect(resumed.code, resumed.text).toBe(0);
    await until("every row sent", async () =>
      (await counts(pipeline, batchId)).queued === 0 ? true : undefined,
    );
    const payments = await paymentsOfBatch(api, batchId);
    expect(payments).toHaveLength(rows.length);
    expect(new Set(payments.map((p) => p.metadata!.payouts_row))).toEqual(new Set(rows.map((r) => r.rowKey)));

    const audit = await pipeline.redis.xrange(`${prefix}:audit`, "-", "+");
    const actions = audit.map(
      ([, fields]) =>
        JSON.parse(fields[fields.indexOf("entry") + 1]!) as { action: string; actor: { name: string } },
    );
    expect(actions.map((a) => a.action)).toEqual(["batch.pause", "batch.resume"]);
    expect(actions[0]!.actor.name).toMatch(/^cli:/);
  }, 120_000);

  it("cancel: rows never sent are canceled, scheduled payments are canceled at the service, the result file says canceled", async () => {
    const { prefix, pipeline } = await setUp("cancel");
    // Amounts ending in 77 stay `scheduled` at the sandbox: every payment made can still be canceled there.
    const rows = Array.from({ length: 20 }, (_, i) => instruction({ amount: 50_077 + i * 100 }));
    const batchId = await submit(pipeline, rows);
    await startWorker(prefix, 2);
    await until("a few rows sent", async () =>
      (await counts(pipeline, batchId)).submitted >= 3 ? true : undefined,
    );

    const canceled = await operator(["cancel", batchId], prefix);
    expect(canceled.code, canceled.text).toBe(0);
    const atService = Number(/(\d+) scheduled payment\(s\) canceled at the service/.exec(canceled.text)?.[1]);
    expect(atService).toBeGreaterThanOrEqual(3);

    const c = await counts(pipeline, batchId);
    expect(c.queued).toBe(0);
    expect(c["canceled-unsent"]).toBeGreaterThan(0);
    // Rows in flight when the cancel came finish (and are canceled at the service by a second cancel,
    // which is safe to run again); never sent means no payment exists for the row.
    await until("no row in flight", async () =>
      (await pipeline.queue.getJobCountByTypes("wait", "delayed", "active", "prioritized")) === 0
        ? true
        : undefined,
    );
    // Run again it cancels what was in flight; had nothing been in flight, the batch is finished by
    // now (the cancel asked the worker for a sweep) and it says there is nothing left to stop.
    const again = await operator(["cancel", batchId], prefix);
    if (again.code !== 0) expect(again.text).toContain("is finished: every row has its outcome");
    const payments = await paymentsOfBatch(api, batchId);
    expect(payments.map((p) => p.status).filter((s) => s !== "canceled")).toEqual([]);
    const after = await counts(pipeline, batchId);
    expect(payments.length + after["canceled-unsent"]).toBe(rows.length);
    expect(after.canceled).toBe(payments.length);

    // The batch finishes as any other, at once: the cancel asks the worker for a sweep (30 s here is
    // half the worker's sweep period, so the periodic sweep alone would not make it). Its final result
    // file says canceled, never sent.
    const resultFile = await until(
      "the final result file",
      async () => {
        const batch = await pipeline.store.getBatch(batchId);
        if (!batch?.finishedAt) return undefined;
        const files = await readdir(path.join(dataDir, "outbox")).catch(() => [] as string[]);
        const name = files.find((f) => f.includes(batchId) && f.endsWith(".csv"));
        return name ? path.join(dataDir, "outbox", name) : undefined;
      },
      30_000,
    );
    const text = await readFile(resultFile, "utf8");
    expect(text).toContain("BATCH_CANCELED");
    expect(text).not.toContain("canceled-unsent");
    expect(
      text
        .split("\n")
        .filter((l) => l.includes("BATCH_CANCELED"))
        .every((l) => l.includes(",canceled,")),
    ).toBe(true);
  }, 180_000);

  it("cancel never marks a row whose send passed the fence; a canceled row retried by an operator is paid once", async () => {
    const { prefix, pipeline } = await setUp("cancel-inflight");
    const [inFlight, unsent] = [plain(1), plain(2)];
    const batchId = await submit(pipeline, [inFlight!, unsent!]);
    // A worker's send passed the fence for the first row (its request is on its way) when the cancel
    // comes: that row may be paid, so it must not become canceled-unsent.
    const sentAt = Date.now();
    const fence = { attempt: 1, requoteGeneration: 0, now: sentAt, inDoubtUntil: sentAt + 60_000 };
    expect(await pipeline.store.fenceSend(batchId, inFlight!.rowKey, fence)).toBe("ok");

    const canceled = await operator(["cancel", batchId], prefix);
    expect(canceled.code, canceled.text).toBe(0);
    expect((await pipeline.store.getRow(batchId, inFlight!.rowKey))?.state).toBe("queued");
    expect((await pipeline.store.getRow(batchId, unsent!.rowKey))?.state).toBe("canceled-unsent");

    // The row in flight goes on under its own key; the canceled one sends nothing.
    await startWorker(prefix, 5);
    await until("the row in flight paid", async () => {
      const row = await pipeline.store.getRow(batchId, inFlight!.rowKey);
      return row?.paymentId ? row : undefined;
    });
    expect((await paymentsOfBatch(api, batchId)).map((p) => p.metadata!.payouts_row)).toEqual([
      inFlight!.rowKey,
    ]);

    // The operator pays the canceled row after all: a retry is an instruction through the gate like
    // any other, and the batch's cancel does not hold the attempt it starts.
    const retried = await operator(["retry", batchId, "--rows", String(unsent!.rowNumber)], prefix);
    expect(retried.code, retried.text).toBe(0);
    const paid = await until("the retried row paid", async () => {
      const row = await pipeline.store.getRow(batchId, unsent!.rowKey);
      return row?.paymentId ? row : undefined;
    });
    expect(paid.attempt).toBe(2);
    const payments = await paymentsOfBatch(api, batchId);
    expect(payments.map((p) => p.metadata!.payouts_row).sort()).toEqual(
      [inFlight!.rowKey, unsent!.rowKey].sort(),
    );
    // Still canceled: it cannot be resumed, and a cancel run again leaves the paid rows alone.
    expect((await readStop(pipeline.store, batchId)).canceled).not.toBeNull();
  }, 120_000);

  it("the circuit breaker pauses a batch whose rows are all refused with one code, and notifies", async () => {
    const { prefix, pipeline } = await setUp("breaker");
    // The sandbox's supplier-mxn needs an attachment until it was paid once: every row is refused
    // ATTACHMENT_REQUIRED, a refusal about the payee account, not about one row.
    const rows = Array.from({ length: 12 }, (_, i) =>
      instruction({
        receivingAccountId: "acct_supplier_mxn",
        deliveryPreference: "international-fx",
        currency: "MXN",
        amount: 100_000 + i * 100,
      }),
    );
    const batchId = await submit(pipeline, rows);
    const worker = await startWorker(prefix, 5, {
      PAYOUTS_BREAKER_SAME_CODE: "3",
      NOTIFY_URL: notifyUrl,
      PAYOUTS_WEBHOOK_SECRET: "whsec-test-secret",
    });
    const stop = await until("the batch paused by the breaker", async () => {
      const s = await readStop(pipeline.store, batchId);
      return s.paused ? s : undefined;
    });
    expect(stop.paused).toMatchObject({ by: "system:breaker", byBreaker: true });
    expect(stop.paused!.reason).toContain("ATTACHMENT_REQUIRED");
    await worker.waitFor(/circuit breaker: batch paused/);
    const note = await until("the batch.paused notification", async () =>
      notifications.find((n) => n.type === "batch.paused" && n.data.batchId === batchId),
    );
    expect(note.data).toMatchObject({ code: "ATTACHMENT_REQUIRED", pausedBy: "system:breaker" });
    await until("the queue drained", async () =>
      (await pipeline.queue.getJobCountByTypes("wait", "delayed", "active", "prioritized")) === 0
        ? true
        : undefined,
    );
    const c = await counts(pipeline, batchId);
    // The rest waits for an operator, never sent.
    expect(c.queued).toBeGreaterThan(0);
    expect(c.rejected).toBeLessThan(rows.length);
  }, 120_000);
});
