/**
 * The storm itself, shared by the short test and `npm run soak`: everything real (worker processes and
 * a `payouts serve` receiving the sandbox's webhooks, all of the built CLI; a private redis-server with
 * an AOF, as production runs it; the sandbox over HTTP behind a logging proxy), everything bounded (it
 * stops by itself), everything it started is stopped.
 *
 * Chaos, at random moments (seeded): workers and the server killed -9 and started again, Redis
 * restarted (cleanly or killed -9; the AOF keeps every acknowledged write), outages where the service
 * answers 5xx to everything long enough that rows end `error` (so operator retries start new attempts
 * once the earlier one can no longer land), and operator retries. Under it all: latency, 5xx,
 * responses dropped after the payment was stored, 429, duplicated and shuffled webhooks.
 *
 * Afterwards the ledger decides, batch by batch and row by row: one live payment per row across all
 * attempts, at the sheet's amount, recorded on the row; the result file (`payouts result`) agrees with
 * the ledger (status, payment id, amount); and the sandbox never saw an Idempotency-Key with two
 * different requests (its own evidence, and the proxy's).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type FaultConfig, startSandbox } from "@payouts/sandbox";
import { type SubmittedInstruction, submitBatch } from "../../../src/batches/index.js";
import { formatMinor } from "../../../src/money/index.js";
import { createPayoutsClient, type Payment } from "../../../src/payouts-api/index.js";
import { openPipeline } from "../../../src/pipeline/index.js";
import { retryRows } from "../../../src/retries/index.js";
import { WEBHOOK_PATH } from "../../../src/server/index.js";
import { CONSUMED_EVENTS } from "../../../src/webhooks/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { instruction, sha } from "../pipeline/helpers.js";
import { type CliProcess, spawnCli } from "../pipeline/processes.js";
import { freePort, startRestartableRedis } from "../restartable-redis.js";
import { startHoldingProxy } from "./holding-proxy.js";

export interface StormOptions {
  /** Rows per batch. */
  rows: number;
  /** Batches submitted: the first before the chaos, the others spread over it. */
  batches: number;
  /** How long faults, kills and retries go on. */
  chaosMs: number;
  workers: number;
  seed: number;
}

export interface StormReport {
  rows: number;
  batches: number;
  paidRows: number;
  /** Result-file lines that agree with the ledger (status, payment id, amount). */
  resultRowsAgreeing: number;
  chaosEvents: number;
  outages: number;
  kills: number;
  serverKills: number;
  redisRestarts: number;
  retriesStarted: number;
  /** Rows seen in `error` (outcome unknown) at some point: what the outages did. */
  rowsSeenInError: number;
  /** Payment creations the sandbox answered (all attempts, including refused ones). */
  createRequests: number;
  /** Webhook deliveries our server accepted (2xx). */
  webhookDeliveries: number;
  /** Every answer our server gave the sandbox's deliveries, by status. */
  webhookAnswers: Record<string, number>;
  /** Keys the logging proxy saw with two bodies. */
  keysWithTwoBodies: string[];
  /** Keys the sandbox itself saw with two different requests (its idempotency evidence). */
  keysReusedAtSandbox: string[];
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

/** The sheet's columns, so the result file carries the reference and amount the ledger is checked by. */
const SHEET = {
  columns: ["reference", "amount", "currency"],
  keys: ["reference", "amount", "currency"],
  format: "csv" as const,
};

function rowsFor(batch: number, n: number): SubmittedInstruction[] {
  return Array.from({ length: n }, (_, i) => {
    // Amounts never end in 13 or 77 (the sandbox's failing and held triggers).
    const amount = 10_000 + batch * 100_000 + i * 10;
    const fx = i % 5 === 4;
    const currency = fx ? "EUR" : "USD";
    const reference = `STORM-${batch}-${i + 1}`;
    return instruction({
      rowNumber: i + 2,
      rowKey: `ref:${reference}`,
      reference,
      amount,
      currency,
      ...(fx ? { receivingAccountId: "acct_supplier_eur", deliveryPreference: "international-fx" } : {}),
      source: { reference, amount: formatMinor(amount, currency), currency },
    });
  });
}

/** The faults always on during the chaos. */
const WEATHER: Partial<FaultConfig> = {
  latencyMs: [0, 400],
  errorRate5xx: 0.15,
  rateLimitRate: 0.03,
  dropAfterStoreRate: 0.1,
  duplicateWebhookRate: 0.3,
  shuffleWebhooks: true,
};
const CALM: Partial<FaultConfig> = { latencyMs: 0, errorRate5xx: 0, rateLimitRate: 0, dropAfterStoreRate: 0 };

export async function runStorm(options: StormOptions): Promise<StormReport> {
  const random = prng(options.seed);
  const dir = await mkdtemp(path.join(tmpdir(), "payouts-storm-"));
  const redis = await startRestartableRedis({ dir, persistence: "aof" });
  const sandbox = await startSandbox({
    clock: { toInProgressMs: 300, toFinalMs: 300 },
    webhookRetry: { attempts: 8, baseDelayMs: 200 },
  });
  const proxy = await startHoldingProxy(sandbox.url);
  const ledger = createPayoutsClient({ entityId: "me", baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const prefix = `storm-${options.seed}`;
  // The operator's connection (submissions, retries, checks) reconnects across the restarts. Two tries
  // per job (each of two quick client tries): an outage of a few seconds then leaves rows in `error`.
  const pipeline = openPipeline({
    ...PIPELINE_DEFAULTS,
    redisUrl: redis.url,
    prefix,
    jobs: { attempts: 2, backoffMs: 200 },
  });
  const env = {
    PAYOUTS_API_URL: proxy.url,
    PAYOUTS_API_KEY: sandbox.apiKey,
    PAYOUTS_API_TIMEOUT_MS: "2000",
    REDIS_URL: redis.url,
    DATA_DIR: dir,
    LOG_LEVEL: process.env.STORM_DEBUG ? "info" : "silent",
  };
  const report: StormReport = {
    rows: options.rows * options.batches,
    batches: options.batches,
    paidRows: 0,
    resultRowsAgreeing: 0,
    chaosEvents: 0,
    outages: 0,
    kills: 0,
    serverKills: 0,
    redisRestarts: 0,
    retriesStarted: 0,
    rowsSeenInError: 0,
    createRequests: 0,
    webhookDeliveries: 0,
    webhookAnswers: {},
    keysWithTwoBodies: [],
    keysReusedAtSandbox: [],
    problems: [],
  };
  const spawnWorker = () =>
    spawnCli(
      [
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
      env,
    );
  // The server receives the sandbox's webhooks (sent straight to it, not through the proxy) and
  // hands them to the workers' reconciliation; a fixed port, so a restarted server gets them again.
  const serverPort = await freePort();
  const spawnServer = () => spawnCli(["serve", "--port", String(serverPort), "--redis-prefix", prefix], env);
  // Deliveries pass a counting proxy on their way to the server (how many came is part of the report).
  const webhookProxy = await startHoldingProxy(`http://127.0.0.1:${serverPort}/`);
  const workers: CliProcess[] = [];
  let server = spawnServer();
  const batches: { batchId: string; rows: SubmittedInstruction[] }[] = [];
  const submitNext = async () => {
    const rows = rowsFor(batches.length, options.rows);
    const { batchId } = await submitBatch({
      store: pipeline.store,
      enqueuer: pipeline.enqueuer,
      instructions: rows,
      fileSha256: sha(),
      sourceName: `storm-${batches.length}.csv`,
      entityId: "me",
      dataDir: dir,
      sheet: SHEET,
    });
    batches.push({ batchId, rows });
  };
  const seenInError = new Set<string>();
  const retryAll = async () => {
    for (const { batchId } of batches) {
      const rows = await pipeline.store.listRows(batchId).catch(() => []);
      for (const r of rows) if (r.state === "error") seenInError.add(`${batchId}/${r.rowKey}`);
      const result = await retryRows({
        store: pipeline.store,
        enqueuer: pipeline.enqueuer,
        batchId,
        ledger,
      }).catch(() => undefined);
      if (result?.kind === "done") report.retriesStarted += result.retried.length;
    }
  };
  try {
    await server.waitFor(/listening on/, 120_000);
    await ledger.webhook.update({
      url: `${webhookProxy.url.replace(/\/$/, "")}${WEBHOOK_PATH}`,
      events: [...CONSUMED_EVENTS],
      isActive: true,
    });
    await submitNext();
    for (let i = 0; i < options.workers; i++) workers.push(spawnWorker());
    // The chaos starts once the workers pay (they take a few seconds to start under load), with an
    // outage while the first batch's rows are in flight; so does every later batch: some rows end
    // `error`, and operator retries must start new attempts for them.
    const started = Date.now() + 180_000;
    while (Date.now() < started && (await firstBatchWaiting())) await sleep(50);

    sandbox.setFaults(WEATHER);
    const chaosStart = Date.now();
    const chaosEnd = chaosStart + options.chaosMs;
    // Every kind of chaos at least once, then at random.
    const kinds = ["outage", "kill-server", "restart-redis", "kill-worker", "restart-redis"];
    while (Date.now() < chaosEnd) {
      if (
        batches.length < options.batches &&
        Date.now() >= chaosStart + (batches.length * options.chaosMs) / options.batches
      )
        await submitNext().then(
          () => kinds.unshift("outage"),
          (err: Error) => report.problems.push(`submitting a batch failed: ${err.message}`),
        );
      if (kinds[0] !== "outage") await sleep(1_000 + random() * 2_000);
      const dice = random();
      const kind =
        kinds.shift() ??
        (dice < 0.3
          ? "kill-worker"
          : dice < 0.4
            ? "kill-server"
            : dice < 0.5
              ? "restart-redis"
              : dice < 0.65
                ? "outage"
                : "retry");
      report.chaosEvents++;
      switch (kind) {
        case "kill-worker": {
          const i = Math.floor(random() * workers.length);
          workers[i]?.child.kill("SIGKILL");
          report.kills++;
          workers[i] = spawnWorker();
          break;
        }
        case "kill-server":
          server.child.kill("SIGKILL");
          await server.exited;
          report.serverKills++;
          server = spawnServer();
          break;
        case "restart-redis":
          // Clean shutdowns and kill -9 alike: with appendfsync always, nothing acknowledged is lost.
          await redis.restart(random() < 0.5 ? "SIGTERM" : "SIGKILL");
          report.redisRestarts++;
          break;
        case "outage":
          // Long enough for the jobs' tries to run out: rows end `error` (outcome unknown).
          sandbox.setFaults({ errorRate5xx: 1, rateLimitRate: 0 });
          await sleep(5_000 + random() * 2_000);
          sandbox.setFaults(WEATHER);
          report.outages++;
          // STORM_DEBUG=1: what the outage did, and the workers' last log lines (LOG_LEVEL info).
          if (process.env.STORM_DEBUG) {
            for (const { batchId } of batches) {
              const p = await pipeline.store.progress(batchId).catch(() => undefined);
              console.error("after outage", batchId, JSON.stringify(p?.counts));
              for (const w of workers) console.error(w.output.slice(-15).join("\n"));
            }
          }
          break;
        default:
          // An operator retry at a random moment (rows still in doubt are left alone, with the reason).
          await retryAll();
      }
    }
    while (batches.length < options.batches) await submitNext();

    // Calm: no more faults; rows in `error` are retried once their last request can no longer land.
    sandbox.setFaults(CALM);
    const settleEnd = Date.now() + 240_000 + options.rows * options.batches * 100;
    for (;;) {
      const open: string[] = [];
      for (const { batchId, rows } of batches) {
        const current = await pipeline.store.listRows(batchId).catch(() => []);
        if (current.length !== rows.length) open.push(`${batchId}: ${current.length} of ${rows.length} rows`);
        for (const r of current) if (r.state !== "completed") open.push(`${r.rowKey}:${r.state}`);
      }
      if (open.length === 0) break;
      if (Date.now() > settleEnd) {
        report.problems.push(`rows not completed after the storm: ${open.join(", ")}`);
        break;
      }
      await retryAll();
      await sleep(500);
    }

    for (const { batchId, rows } of batches) await checkBatch(batchId, rows);
    report.keysWithTwoBodies = proxy.keysWithTwoBodies();
    const stats = sandbox.stats();
    report.keysReusedAtSandbox = stats.idempotency.reusedKeys;
    if (stats.idempotency.keysReusedWithDifferentRequest !== stats.idempotency.reusedKeys.length)
      report.problems.push(`${stats.idempotency.keysReusedWithDifferentRequest} keys reused at the sandbox`);
    report.rowsSeenInError = seenInError.size;
    report.createRequests = proxy.counts.get("POST /payments") ?? 0;
    for (const [label, n] of webhookProxy.answers)
      if (label.startsWith(`POST ${WEBHOOK_PATH} 2`)) report.webhookDeliveries += n;
    report.webhookAnswers = Object.fromEntries(webhookProxy.answers);
    return report;
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    server.child.kill("SIGKILL");
    await pipeline.close().catch(() => undefined);
    await ledger.close();
    await proxy.close();
    await webhookProxy.close();
    await sandbox.close();
    await redis.stop("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }

  async function firstBatchWaiting(): Promise<boolean> {
    const progress = await pipeline.store.progress(batches[0]!.batchId).catch(() => undefined);
    return progress === undefined || progress.counts.queued === progress.batch.rowCount;
  }

  /** The ledger decides: one live payment per row across all attempts, at the sheet's amount. */
  async function checkBatch(batchId: string, rows: SubmittedInstruction[]): Promise<void> {
    const byRow = new Map<string, Payment[]>();
    for await (const p of ledger.payments.listAll({ metadata: { payouts_batch: batchId } })) {
      const key = p.metadata?.payouts_row ?? "?";
      byRow.set(key, [...(byRow.get(key) ?? []), p]);
    }
    const recorded = new Map((await pipeline.store.listRows(batchId)).map((r) => [r.rowKey, r]));
    const results = await resultFileOf(batchId);
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
      const payment = live[0]!;
      if (payment.amount !== row.amount)
        report.problems.push(`row ${row.rowKey}: paid ${payment.amount}, the sheet says ${row.amount}`);
      const record = recorded.get(row.rowKey);
      if (record?.paymentId !== payment.id)
        report.problems.push(
          `row ${row.rowKey}: the row records ${record?.paymentId}, the ledger ${payment.id}`,
        );
      else report.paidRows++;
      // The result file, line by line, against the ledger.
      const line = results.get(row.reference ?? "");
      const expected = {
        status: payment.status,
        payment_id: payment.id,
        amount: formatMinor(payment.amount, payment.currency),
      };
      const got = { status: line?.status, payment_id: line?.payment_id, amount: line?.amount };
      if (JSON.stringify(got) !== JSON.stringify(expected))
        report.problems.push(
          `row ${row.rowKey}: the result file says ${JSON.stringify(got)}, the ledger ${JSON.stringify(expected)}`,
        );
      else report.resultRowsAgreeing++;
    }
    if (results.size !== rows.length)
      report.problems.push(
        `batch ${batchId}: the result file has ${results.size} rows, the sheet ${rows.length}`,
      );
  }

  /** The batch's result file as `payouts result` writes it, by reference. */
  async function resultFileOf(batchId: string): Promise<Map<string, Record<string, string>>> {
    const file = path.join(dir, `${batchId}.result.csv`);
    const result = spawnCli(
      ["result", batchId, "--format", "csv", "-o", file, "--redis-prefix", prefix],
      env,
    );
    const code = await result.exited;
    if (code !== 0) {
      report.problems.push(`payouts result ${batchId} exited ${code}: ${result.output.join(" | ")}`);
      return new Map();
    }
    const [header, ...lines] = parseCsv((await readFile(file, "utf8")).replace(/^\uFEFF/, ""));
    const byReference = new Map<string, Record<string, string>>();
    for (const cells of lines) {
      const line = Object.fromEntries((header ?? []).map((h, i) => [h, cells[i] ?? ""]));
      byReference.set(line.reference ?? "", line);
    }
    return byReference;
  }
}

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF): enough for our own result files. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || record.length > 0) records.push([...record, field]);
  return records;
}
