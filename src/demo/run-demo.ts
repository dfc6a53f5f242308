/**
 * `payouts demo`: the whole job on embedded defaults, in one process.
 *
 *   sandbox (unless PAYOUTS_API_URL) ─ Redis (REDIS_URL, else a private redis-server) ─ payment worker
 *   ─ reconcile worker + sweep ─ HTTP server with the webhook receiver ─ submit the sample sheet ─
 *   progress until every row is final ─ result file in DATA_DIR/outbox ─ summary.
 *
 * It exits 0 when every row reached the state the sheet intends: against the sandbox that is the
 * outcome its trigger values give (an amount ending in .13 fails by design); against a real service,
 * any final payment state (completed, failed, canceled).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { outcomeForAmount, type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { assembleServices, type ServiceName } from "../app/index.js";
import { approveBatch, type DecisionContext } from "../approvals/index.js";
import { packageFile } from "../assets/index.js";
import {
  type BatchProgress,
  BatchStore,
  DEFAULT_KEY_PREFIX,
  ROW_STATES,
  type RowOutcome,
  TERMINAL_ROW_STATES,
} from "../batches/index.js";
import type { AppConfig } from "../config/index.js";
import { cliCaller, passGate } from "../gate/index.js";
import { configSecrets, createLogger } from "../logging/index.js";
import { formatMinor } from "../money/index.js";
import { connectRedis, createWorkerClient } from "../pipeline/index.js";
import { rowsInSheetOrder, writeResultFile } from "../results/index.js";
import { WEBHOOK_PATH } from "../server/index.js";
import { CONSUMED_EVENTS } from "../webhooks/index.js";
import { type PrivateRedis, startPrivateRedis } from "./private-redis.js";

export interface DemoOptions {
  /** The settings; without REDIS_URL set, a private redis-server is started. */
  config: AppConfig;
  sheetPath?: string;
  /** How long to wait for every row to be final. Default 120 s. */
  timeoutMs?: number;
  say: (line: string) => void;
  /** Live progress line (a terminal overwrites it); defaults to `say` every few seconds. */
  progress?: (p: BatchProgress) => void;
  /** Port of the console and API (default 0: a free one). */
  port?: number;
  /** Keep the console, API and workers running after the result, until SIGINT or SIGTERM. */
  stay?: boolean;
}

export type DemoResult =
  | { ok: true; batchId: string; resultPath: string }
  | {
      ok: false;
      reason: string;
      batchId?: string;
      resultPath?: string;
      /** Set when SIGINT or SIGTERM stopped the demo (everything it started is stopped). */
      stoppedBy?: NodeJS.Signals;
    };

/** The console user the demo creates (an admin, with a new password each run, disabled when it stops). */
export const DEMO_USER = "demo";

/** What the demo runs of `payouts worker` and `payouts serve`: every part but the two folder intakes. */
export const DEMO_SERVICES: readonly ServiceName[] = ["payments", "reconcile", "approvals", "server"];

/** How long each part (workers, server, sandbox, Redis) may take to stop. */
const PART_STOP_MS = 5_000;

/** The demo's sandbox settles payments within a few seconds so the sample finishes quickly. */
const DEMO_CLOCK = { toInProgressMs: 400, toFinalMs: 800 };

/**
 * The demo, start to finish. Kept as one function on purpose: it is a script read top to bottom
 * (start each part, register its stop right after, submit, wait, report), and the `finally` that
 * stops every part started so far needs all of their handles in one scope.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { config, say } = options;
  const logger = createLogger({
    level: config.logLevel === "info" ? "warn" : config.logLevel,
    name: "demo",
    secrets: configSecrets(config),
  });
  const cleanups: Array<() => Promise<unknown>> = [];
  // Each part gets a bounded time to stop: with Redis or the service gone, a close that waits on
  // them must not keep the demo up (what it leaves is working state; the ledger keeps the payments).
  const onStop = (fn: () => Promise<unknown>, ms = PART_STOP_MS) => cleanups.push(() => withinMs(fn(), ms));
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
  };
  // Ctrl-C or a SIGTERM stops the demo in order, like `worker` and `serve`: the wait ends, then
  // every part started so far (workers, server, sandbox, the private redis-server) is stopped.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    say(`${signal}: stopping the demo (workers, server, sandbox and the Redis it started)`);
    stop.abort(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const stopped = (): DemoResult | undefined =>
    stop.signal.aborted
      ? {
          ok: false,
          reason: `stopped by ${String(stop.signal.reason)}`,
          stoppedBy: stop.signal.reason as NodeJS.Signals,
        }
      : undefined;
  try {
    // 1. The service: the embedded sandbox unless PAYOUTS_API_URL points elsewhere.
    let sandbox: RunningSandbox | undefined;
    let api: { apiUrl: string; apiKey: string; entityId: string };
    if (config.apiUrl) {
      if (!config.apiKey) return { ok: false, reason: "PAYOUTS_API_URL is set but PAYOUTS_API_KEY is not" };
      api = { apiUrl: config.apiUrl, apiKey: config.apiKey, entityId: config.entityId };
    } else {
      sandbox = await startSandbox({ clock: DEMO_CLOCK, logger });
      onStop(() => sandbox!.close());
      api = { apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: config.entityId };
      say(`SANDBOX started at ${sandbox.url} (a simulated Partner Payouts Service; no real money moves)`);
    }

    // 2. Redis: REDIS_URL, else a private redis-server that lives as long as the demo.
    let redisUrl = config.redisUrl;
    if (!config.redisUrlGiven) {
      const redis: PrivateRedis = await startPrivateRedis();
      onStop(() => redis.stop());
      redisUrl = redis.url;
      say(`Redis: a private redis-server at ${redis.url} (set REDIS_URL to use your own)`);
    } else {
      say(`Redis: ${redisUrl.replace(/\/\/[^@/]*@/, "//***@")}`);
    }

    const early = stopped();
    if (early) return early;

    // The demo's own reads of the batch (progress, the result file) never wait on a Redis that went
    // away: a command that loses Redis stops and says so, like submit and status (the workers below
    // would reconnect for good).
    const watchConnection = connectRedis(redisUrl, { failFast: true, maxRetriesPerRequest: 1 });
    onStop(async () => watchConnection.disconnect());
    const watchStore = new BatchStore(watchConnection);

    // 3. What `payouts worker` and `payouts serve` run (src/app), in this process: the same parts,
    // on the demo's Redis and API. Not the watched folder nor the nightly run: the demo runs its one
    // sheet, and must not take sheets from (or change the schedule of) an installation it shares.
    const demoConfig: AppConfig = {
      ...config,
      redisUrl,
      redisClusterNodes: undefined,
      apiUrl: api.apiUrl,
      apiKey: api.apiKey,
      webhookSecret: config.webhookSecret ?? api.apiKey,
      httpPort: options.port ?? 0,
    };
    const services = await assembleServices(demoConfig, {
      run: DEMO_SERVICES,
      prefix: DEFAULT_KEY_PREFIX,
      logger,
      shutdownGraceMs: PART_STOP_MS,
      // The sample settles in seconds: result files are rewritten and rows looked at sooner. Webhooks
      // do most of the work; the sweep catches what they miss (against a real service the demo
      // registers no webhook, so the sweep does it all).
      outboxDebounceMs: 1_000,
      reconcile: { sweepEveryMs: sandbox ? 5_000 : 2_000, staleAfterMs: sandbox ? 5_000 : 1_000 },
    });
    // The server, then the workers, then the rest, each within its grace (three in all).
    onStop(() => services.stop(), 3 * PART_STOP_MS);
    const payments = services.payments!;
    const outbox = services.outbox!;
    const server = services.server!;
    const store = payments.pipeline.store;
    // The demo's own calls (the webhook registration, the sheet's validation), as `payouts submit` makes them.
    const client = createWorkerClient({ ...api, timeoutMs: config.apiTimeoutMs });
    onStop(() => client.close());
    if (sandbox) {
      await client.webhook.update({
        url: `http://127.0.0.1:${server.port}${WEBHOOK_PATH}`,
        events: [...CONSUMED_EVENTS],
        isActive: true,
      });
      say(`webhooks: the sandbox delivers to http://127.0.0.1:${server.port}${WEBHOOK_PATH}`);
    }
    // A fresh password each run: the login works for this demo only.
    const demoPassword = randomBytes(9).toString("base64url");
    await server.auth.setUser(DEMO_USER, "admin", demoPassword);
    // Disabled again when the demo stops (before the server closes): on a REDIS_URL that outlives the
    // demo, an admin login printed to a terminal must not stay usable.
    onStop(() => server.auth.disableUser(DEMO_USER));
    say(`console: ${server.url}/  (log in as ${DEMO_USER} / ${demoPassword}; API at ${server.url}/api/v1)`);

    // 4. Submit the sheet (the same step as `payouts submit`: through the gate, audited as the shell user).
    const sheetPath = path.resolve(options.sheetPath ?? packageFile("samples/payouts-valid.csv"));
    const outcome = await passGate(
      { ...cliCaller(), pipeline: payments.pipeline },
      {
        kind: "submit",
        sheet: {
          sheetPath,
          api: client,
          pipeline: services.pipeline,
          entityId: config.entityId,
          onInvalid: "reject",
          // The demo may run many times against one Redis: each run is its own batch.
          allowDuplicateFile: true,
        },
      },
    );
    if (outcome.kind !== "submitted") {
      const where = outcome.reportPath ? `; see ${outcome.reportPath}` : "";
      return { ok: false, reason: `the sheet was not submitted (${outcome.kind})${where}` };
    }
    const batchId = outcome.batchId;
    say(`submitted ${path.basename(sheetPath)} as batch ${batchId}: ${outcome.summary.validRows} rows`);
    if (outcome.awaitingApproval && !sandbox) {
      // Against a real service (PAYOUTS_API_URL) the demo moves real money: it must not approve its own
      // batch. The batch stays held for a person with the approver role.
      return {
        ok: false,
        reason:
          `batch ${batchId} waits for approval (APPROVAL_THRESHOLDS) and the demo approves only its sandbox's ` +
          "batches: an approver approves it in the console or with `payouts approve`, and `payouts worker` pays it",
        batchId,
      };
    }
    if (outcome.awaitingApproval) {
      const pipeline = payments.pipeline;
      await approveAsDemo(
        { approvals: pipeline.approvals, store, enqueuer: pipeline.enqueuer },
        batchId,
        say,
      );
    }
    const afterSubmit = stopped();
    if (afterSubmit) return { ...afterSubmit, batchId };

    // 5. Wait until every row is final.
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    let progress = await watchStore.progress(batchId);
    let lastLine = "";
    while (progress && progress.done < progress.batch.rowCount && Date.now() < deadline) {
      if (options.progress) options.progress(progress);
      else {
        const line = progressLine(progress);
        if (line !== lastLine) say(line);
        lastLine = line;
      }
      await sleep(500, undefined, { signal: stop.signal }).catch(() => undefined);
      if (stop.signal.aborted) break;
      progress = await watchStore.progress(batchId);
    }
    if (!progress) return { ok: false, reason: `batch ${batchId} vanished from Redis`, batchId };
    if (options.progress) options.progress(progress);
    say(progressLine(progress));
    const interrupted = stopped();
    if (interrupted) return { ...interrupted, batchId };

    // 6. The result file and the summary.
    await outbox.flush();
    const written = await writeResultFile(watchStore, batchId, { dataDir: config.dataDir });
    for (const line of summaryLines(progress)) say(line);
    say(`result file: ${written.path}`);
    if (progress.done < progress.batch.rowCount) {
      return {
        ok: false,
        reason: `${progress.batch.rowCount - progress.done} row(s) were not final after ${Math.round((options.timeoutMs ?? 120_000) / 1000)} s`,
        batchId,
        resultPath: written.path,
      };
    }
    // Streamed a page at a time: a big sheet's rows are never all held; the first few odd ones are shown.
    const unexpected: RowOutcome[] = [];
    let unexpectedCount = 0;
    for await (const row of rowsInSheetOrder(watchStore, batchId)) {
      if (asIntended(row, sandbox !== undefined)) continue;
      if (++unexpectedCount <= 20) unexpected.push(row);
    }
    for (const r of unexpected) {
      say(
        `  row ${r.rowNumber} (${r.rowKey}) ended ${r.state}${r.errorCode ? ` ${r.errorCode}: ${r.errorMessage}` : ""}`,
      );
    }
    const result: DemoResult =
      unexpectedCount > 0
        ? {
            ok: false,
            reason: `${unexpectedCount} row(s) did not end as intended`,
            batchId,
            resultPath: written.path,
          }
        : { ok: true, batchId, resultPath: written.path };
    if (options.stay && !stop.signal.aborted) {
      say(`the console stays up at ${server.url}/ until Ctrl-C`);
      await new Promise((resolve) => stop.signal.addEventListener("abort", resolve, { once: true }));
    }
    return result;
  } catch (err) {
    // The demo ends on this failure (its one line is the caller's): what its parts log while they stop
    // without Redis or the service (reconnection attempts) would only bury that line.
    logger.level = "silent";
    throw err;
  } finally {
    await cleanup();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** `work`, or a rejection once `ms` have passed (the work itself is left to finish or not). */
function withinMs<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The state a row should end in: the sandbox's trigger values decide; a real service, any payment end. */
function asIntended(row: RowOutcome, sandbox: boolean): boolean {
  if (!sandbox) return row.state === "completed" || row.state === "failed" || row.state === "canceled";
  const outcome = outcomeForAmount(row.instruction.amount);
  return row.state === (outcome === "fail" ? "failed" : "completed");
}

export function progressLine(p: BatchProgress): string {
  const parts = Object.entries(p.counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${state} ${n}`);
  return `progress: ${p.done}/${p.batch.rowCount} final (${parts.join(", ")})`;
}

/** The summary from the batch's counters (rows by state, money by state and currency): no row is read. */
function summaryLines(p: BatchProgress): string[] {
  const lines = ["summary:"];
  for (const state of [
    ...TERMINAL_ROW_STATES,
    ...ROW_STATES.filter((s) => !TERMINAL_ROW_STATES.includes(s)),
  ]) {
    const count = p.counts[state] ?? 0;
    if (count === 0) continue;
    const money = Object.keys(p.totals)
      .sort()
      .flatMap((currency) => {
        const amount = p.totals[currency]?.[state];
        return amount ? [`${currency} ${formatMinor(amount, currency)}`] : [];
      })
      .join(", ");
    lines.push(`  ${state.padEnd(11)} ${String(count).padStart(5)} row(s)  ${money}`);
  }
  if (p.batch.invalidCount > 0)
    lines.push(`  invalid     ${String(p.batch.invalidCount).padStart(5)} row(s)`);
  lines.push(`  ${p.done} of ${p.batch.rowCount} rows final`);
  return lines;
}

/** Who approves a held demo batch: never a real user, and never the demo's own submitter (`cli:<user>`). */
export const DEMO_APPROVER = "demo-approver";

/**
 * With APPROVAL_THRESHOLDS set, the demo's sample batch is held like any other: the gate sits in the
 * one submission path and the demo does not step around it. A demo has nobody else to approve, so it
 * approves as {@link DEMO_APPROVER}s (as many as APPROVALS_REQUIRED asks), through the same decision
 * as the console and the API, and says so: in real use a second person approves it. Only for the
 * sandbox: runDemo never calls it against a real service (PAYOUTS_API_URL).
 */
export async function approveAsDemo(
  ctx: DecisionContext,
  batchId: string,
  say: (line: string) => void,
): Promise<void> {
  const held = await ctx.approvals.get(batchId);
  if (!held) return;
  const reasons = held.reasons
    .map(
      (r) =>
        `${r.currency} ${formatMinor(r.total, r.currency)} reaches ${formatMinor(r.threshold, r.currency)}`,
    )
    .join(", ");
  say(
    `APPROVAL_THRESHOLDS is set: batch ${batchId} waits for ${held.required} approval(s)` +
      `${reasons ? ` (${reasons})` : ""}. In real use another person approves it in the console, the API ` +
      "or with `payouts approve`; this demo approves it itself:",
  );
  for (let i = 1; i <= held.required; i++) {
    const name = held.required === 1 ? DEMO_APPROVER : `${DEMO_APPROVER}-${i}`;
    const answer = await approveBatch(ctx, batchId, { name, mayApprove: true });
    say(`  approved by ${name} (demo approver): ${answer.outcome}`);
  }
}
