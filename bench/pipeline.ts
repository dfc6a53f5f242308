/**
 * `npm run bench:pipeline [-- --rows N --concurrency C]`: N rows (default 10,000) through
 * submit → worker → sandbox on loopback, against a plain undici loop creating the same number of
 * payments at the same concurrency against a fresh sandbox (before and after the pipeline run), so the
 * ratio shows what the queue costs.
 * Prints figures only (targets: enqueue ≥ 10,000 rows/s; pipeline ≥ 60% of the plain loop).
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); its keys live under a unique prefix and
 * are deleted at the end. Each sandbox runs as its own process (`payouts sandbox --port 0`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { pipelineSettings } from "../src/app/index.js";
import { type SubmittedInstruction, submitBatch } from "../src/batches/index.js";
import { loadConfig } from "../src/config/index.js";
import { createWorkerClient, openPipeline, startPaymentService } from "../src/pipeline/index.js";
import { plainCreateLoop } from "./lib/plain-create-loop.js";

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/payouts.js");
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "32" },
    "plain-only": { type: "boolean", default: false },
  },
});
const ROWS = Number(values.rows);
const CONCURRENCY = Number(values.concurrency);
if (!Number.isInteger(ROWS) || ROWS < 1 || !Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  process.stderr.write("usage: bench:pipeline [-- --rows N --concurrency C]\n");
  process.exit(2);
}

interface Sandbox {
  child: ChildProcess;
  url: string;
  apiKey: string;
}

async function startSandboxProcess(): Promise<Sandbox> {
  const child = spawn(process.execPath, [BIN, "sandbox", "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let text = "";
  for await (const chunk of child.stdout!) {
    text += String(chunk);
    const url = /base URL\s+(http\S+)/.exec(text)?.[1];
    const apiKey = /API key\s+(\S+)/.exec(text)?.[1];
    if (url && apiKey) return { child, url, apiKey };
  }
  throw new Error("the sandbox exited before printing its URL");
}

async function stopSandbox(sandbox: Sandbox): Promise<void> {
  const exited = new Promise((resolve) => sandbox.child.once("exit", resolve));
  sandbox.child.kill("SIGTERM");
  await exited;
}

function instructions(n: number): SubmittedInstruction[] {
  const run = randomBytes(3).toString("hex");
  return Array.from({ length: n }, (_, i) => ({
    rowNumber: i + 2,
    rowKey: `BENCH-${run}-${i}`,
    reference: `BENCH-${run}-${i}`,
    originatingAccountId: "acct_ops_checking",
    receivingAccountId: "acct_vendor_ach",
    amount: 10_000 + (i % 5000) * 10,
    currency: "USD",
    deliveryPreference: "standard-ach",
    deliveryResolvedFromBlank: false,
    payerMemo: undefined,
    recipientNote: "bench",
    purpose: undefined,
    attachment: undefined,
    metadata: { run },
  }));
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
const fmt = (n: number) => n.toLocaleString("en-US");

async function benchPipeline(): Promise<{ enqueuePerSec: number; paymentsPerSec: number }> {
  const sandbox = await startSandboxProcess();
  const prefix = `bench-${randomBytes(4).toString("hex")}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), "payouts-bench-"));
  const settings = { ...pipelineSettings(loadConfig({}), prefix), redisUrl: REDIS_URL };
  const pipeline = openPipeline(settings);
  try {
    const rows = instructions(ROWS);
    const t0 = performance.now();
    const { batchId } = await submitBatch({
      store: pipeline.store,
      enqueuer: pipeline.enqueuer,
      instructions: rows,
      fileSha256: randomBytes(32).toString("hex"),
      sourceName: "bench.csv",
      entityId: "me",
      dataDir,
    });
    const enqueueMs = performance.now() - t0;
    process.stdout.write(
      `enqueue:  ${fmt(ROWS)} rows in ${(enqueueMs / 1000).toFixed(2)} s = ${fmt(rate(ROWS, enqueueMs))} rows/s\n`,
    );

    const t1 = performance.now();
    const service = await startPaymentService({
      ...settings,
      client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
      concurrency: CONCURRENCY,
    });
    for (;;) {
      const progress = await pipeline.store.progress(batchId);
      if (progress && progress.counts.queued === 0) break;
      await sleep(25);
    }
    const payMs = performance.now() - t1;
    await service.stop();
    const progress = await pipeline.store.progress(batchId);
    const paid = ROWS - (progress?.counts.error ?? 0) - (progress?.counts.rejected ?? 0);
    process.stdout.write(
      `pipeline: ${fmt(paid)} payments in ${(payMs / 1000).toFixed(2)} s = ${fmt(rate(paid, payMs))} payments/s` +
        ` (concurrency ${CONCURRENCY}; rejected ${progress?.counts.rejected ?? 0}, error ${progress?.counts.error ?? 0})\n`,
    );
    return { enqueuePerSec: rate(ROWS, enqueueMs), paymentsPerSec: rate(paid, payMs) };
  } finally {
    await pipeline.queue.obliterate({ force: true }).catch(() => undefined);
    let cursor = "0";
    do {
      const [next, keys] = await pipeline.redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await pipeline.redis.unlink(...keys);
    } while (cursor !== "0");
    await pipeline.close();
    await rm(dataDir, { recursive: true, force: true });
    await stopSandbox(sandbox);
  }
}

/** The same payments, created by C loops over one keep-alive undici agent: no queue, no Redis. */
async function benchPlainLoop(): Promise<number> {
  const sandbox = await startSandboxProcess();
  try {
    const rows = instructions(ROWS);
    const { created, failed, ms } = await plainCreateLoop({
      url: sandbox.url,
      apiKey: sandbox.apiKey,
      concurrency: CONCURRENCY,
      count: ROWS,
      row: (i) => ({ ...rows[i]!, reference: rows[i]!.reference ?? rows[i]!.rowKey }),
    });
    process.stdout.write(
      `plain:    ${fmt(created)} payments in ${(ms / 1000).toFixed(2)} s = ${fmt(rate(created, ms))} payments/s` +
        ` (undici loop, concurrency ${CONCURRENCY}; failed ${failed})\n`,
    );
    return rate(created, ms);
  } finally {
    await stopSandbox(sandbox);
  }
}

/**
 * Runs the plain loop in a fresh child process: state left behind by one HTTP client in a process
 * (measured: a plain loop before the pipeline in the same process halved the pipeline's rate) must
 * not colour the other figure.
 */
async function plainLoopInChildProcess(): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(import.meta.url),
      "--plain-only",
      "--rows",
      String(ROWS),
      "--concurrency",
      String(CONCURRENCY),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    process.stdout.write(String(chunk));
  }
  const rateLine = /PLAIN_RATE (\d+)/.exec(out);
  if (!rateLine) throw new Error("the plain loop printed no rate");
  return Number(rateLine[1]);
}

if (values["plain-only"]) {
  const plainRate = await benchPlainLoop();
  process.stdout.write(`PLAIN_RATE ${plainRate}\n`);
} else {
  process.stdout.write(`bench:pipeline  rows ${fmt(ROWS)}  concurrency ${CONCURRENCY}  redis ${REDIS_URL}\n`);
  // The plain loop runs before and after the pipeline and the ratio uses their mean, so a change in
  // the machine's background load during the run skews the ratio less.
  const plainBefore = await plainLoopInChildProcess();
  const pipelineFigures = await benchPipeline();
  const plainAfter = await plainLoopInChildProcess();
  const plain = (plainBefore + plainAfter) / 2;
  const ratio = plain > 0 ? (pipelineFigures.paymentsPerSec / plain) * 100 : 0;
  process.stdout.write(
    `ratio:    pipeline / plain (mean of both runs, ${fmt(Math.round(plain))}/s) = ${ratio.toFixed(0)}%` +
      "   (targets: enqueue >= 10,000 rows/s, ratio >= 60%)\n",
  );
}
