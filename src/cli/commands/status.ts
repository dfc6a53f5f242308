/**
 * `payouts status [batch] [--json]`: counts by state and money per currency. On a terminal, a batch's
 * progress is a live bar until every row is final (Ctrl-C stops watching); otherwise plain lines.
 * Without a batch id, the latest batches.
 */
import { setTimeout as sleep } from "node:timers/promises";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { type ApprovalRecord, ApprovalStore, describeApproval } from "../../approvals/index.js";
import { type BatchStop, readStop } from "../../batch-control/index.js";
import {
  type BatchProgress,
  type BatchStore,
  ROW_STATES,
  type RowState,
  rowsOfPage,
  type ScanCursor,
  scanRows,
} from "../../batches/index.js";
import { loadConfig } from "../../config/index.js";
import { errorHelp } from "../../error-codes/index.js";
import { formatMinor } from "../../money/index.js";
import { withBatchStore } from "../batch-store-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { parsePositiveInt, redisPrefixOption } from "../options.js";

interface StatusOptions {
  json?: boolean;
  limit: number;
  watch: boolean;
  redisPrefix: string;
}

export function registerStatus(program: Command): void {
  program
    .command("status")
    .argument("[batch]", "batch id (default: list the latest batches)")
    .description("Batch progress: rows by state and money totals per currency")
    .option("--json", "print JSON instead of text")
    .option("--limit <n>", "how many batches to list without a batch id", parsePositiveInt, 10)
    .option("--no-watch", "on a terminal, print once instead of a live progress bar")
    .addOption(redisPrefixOption())
    .action(async (batchId: string | undefined, opts: StatusOptions) => {
      const config = loadConfig();
      await withBatchStore(config, opts.redisPrefix, async (store) => {
        const say = (line: string) => process.stdout.write(`${line}\n`);
        if (batchId === undefined) await listBatches(store, opts, say);
        else await showBatch(store, batchId, opts, say);
      });
    });
}

/** Minor units as major units of the currency (`1250.00`), or as-is for an unknown code. */
function money(minor: number, currency: string): string {
  try {
    return formatMinor(minor, currency);
  } catch {
    return String(minor);
  }
}

function progressJson(p: BatchProgress, approval?: ApprovalRecord) {
  return {
    batch: p.batch,
    counts: p.counts,
    totals: p.totals,
    final: p.done,
    rows: p.batch.rowCount,
    ...(approval ? { approval } : {}),
  };
}

/** The text report of one batch, as lines (pure: used for plain output and tests). */
export function formatProgress(p: BatchProgress, approval?: ApprovalRecord): string[] {
  const b = p.batch;
  const held = approval !== undefined && approval.status !== "approved";
  const lines = [
    `batch ${b.id}  ${b.sourceName}  created ${b.createdAt}  entity ${b.entityId}`,
    `rows: ${b.rowCount} valid, ${b.invalidCount} invalid; ${p.done} of ${b.rowCount} final` +
      (b.enqueueComplete || held ? "" : "  (submission not finished: a worker will complete it)"),
    ...(approval ? describeApproval(approval) : []),
    ...(b.ledger ? [`${b.ledger.summary} (checked ${b.ledger.at})`] : []),
    `  ${ROW_STATES.filter((s) => p.counts[s] > 0)
      .map((s) => `${s} ${p.counts[s]}`)
      .join(", ")}`,
  ];
  for (const [currency, byState] of Object.entries(p.totals).sort(([a], [b]) => a.localeCompare(b))) {
    const parts = (Object.entries(byState) as [RowState, number][]).map(
      ([s, v]) => `${s} ${money(v, currency)}`,
    );
    lines.push(`  ${currency}: ${parts.join(", ")}`);
  }
  return lines;
}

/** What stopped a batch, and what to do (pure). */
export function stopLines(stop: BatchStop, batchId: string): string[] {
  if (stop.canceled)
    return [`canceled by ${stop.canceled.by} at ${stop.canceled.at}: rows never sent are canceled`];
  if (!stop.paused) return [];
  const who = stop.paused.byBreaker ? "the circuit breaker" : stop.paused.by;
  return [
    `PAUSED by ${who} at ${stop.paused.at}: ${stop.paused.reason}`,
    `  nothing more of it is sent: \`payouts resume ${batchId}\` or \`payouts cancel ${batchId}\``,
  ];
}

async function showBatch(
  store: BatchStore,
  batchId: string,
  opts: StatusOptions,
  say: (line: string) => void,
): Promise<void> {
  let progress = await store.progress(batchId);
  if (!progress)
    throw new CliError(`no batch ${batchId} in Redis (run \`payouts status\` to list batches)`, EXIT.usage);
  const approval = await approvalsOf(store).get(batchId);
  if (opts.json) {
    say(JSON.stringify(progressJson(progress, approval), null, 2));
    return;
  }
  // A held batch does not move until someone decides: print it once instead of watching.
  const waiting = approval !== undefined && approval.status === "awaiting-approval";
  const live =
    opts.watch && !waiting && process.stdout.isTTY === true && progress.done < progress.batch.rowCount;
  // A paused batch does not move until someone resumes or cancels it: print it once, saying why.
  const halt = await readStop(store, batchId);
  if (!live || halt.paused) {
    for (const line of formatProgress(progress, approval)) say(line);
    for (const line of stopLines(halt, batchId)) say(line);
    for (const line of await attentionLines(store, batchId)) say(line);
    return;
  }
  const bar = new cliProgress.SingleBar(
    { format: "{bar} {value}/{total} final | {states}", hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  const states = (p: BatchProgress) =>
    ROW_STATES.filter((s) => p.counts[s] > 0)
      .map((s) => `${s} ${p.counts[s]}`)
      .join(", ");
  bar.start(progress.batch.rowCount, progress.done, { states: states(progress) });
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.once("SIGINT", stop);
  try {
    while (!stopped && progress.done < progress.batch.rowCount) {
      await sleep(500);
      progress = (await store.progress(batchId)) ?? progress;
      bar.update(progress.done, { states: states(progress) });
    }
  } finally {
    bar.stop();
    process.off("SIGINT", stop);
  }
  for (const line of formatProgress(progress, await approvalsOf(store).get(batchId))) say(line);
  for (const line of await attentionLines(store, batchId)) say(line);
}

/** Rows looked at for the "needs attention" lines, at most. */
const ATTENTION_ROWS = 5_000;

/**
 * What went wrong in the batch and what to do, per error code (from the one error-code table): the
 * rows that ended failed, rejected, canceled or in error, the first {@link ATTENTION_ROWS} of them.
 */
export async function attentionLines(store: BatchStore, batchId: string): Promise<string[]> {
  const byCode = new Map<string, number[]>();
  let cursor: ScanCursor | undefined;
  let seen = 0;
  do {
    const page = await scanRows(store, batchId, {
      states: new Set(["failed", "rejected", "canceled", "error"]),
      limit: 500,
      cursor,
    });
    for (const row of await rowsOfPage(store, batchId, page)) {
      const code = row.errorCode ?? row.state.toUpperCase();
      byCode.set(code, [...(byCode.get(code) ?? []), row.rowNumber]);
    }
    seen += page.keys.length;
    cursor = page.next ?? undefined;
  } while (cursor && seen < ATTENTION_ROWS);
  const lines: string[] = [];
  for (const [code, rows] of [...byCode].sort((a, b) => b[1].length - a[1].length)) {
    const help = errorHelp(code);
    const which = rows.slice(0, 5).join(", ") + (rows.length > 5 ? ", …" : "");
    lines.push(`  ${code} × ${rows.length} (row ${which}): ${help.sentence} Next: ${help.nextStep}`);
  }
  return lines.length > 0 ? ["needs attention:", ...lines] : [];
}

/** The approval records beside the batch store (same Redis, same prefix). */
function approvalsOf(store: BatchStore): ApprovalStore {
  return new ApprovalStore(store.redis, { prefix: store.keys.prefix });
}

async function listBatches(
  store: BatchStore,
  opts: StatusOptions,
  say: (line: string) => void,
): Promise<void> {
  const batches = await store.latestBatches(opts.limit);
  const progresses = (await Promise.all(batches.map((b) => store.progress(b.id)))).filter(
    (p): p is BatchProgress => p !== undefined,
  );
  const approvalStore = approvalsOf(store);
  const approvals = await Promise.all(progresses.map((p) => approvalStore.get(p.batch.id)));
  if (opts.json) {
    say(
      JSON.stringify(
        progresses.map((p, i) => progressJson(p, approvals[i])),
        null,
        2,
      ),
    );
    return;
  }
  if (progresses.length === 0) {
    say("no batches yet (submit a sheet with `payouts submit <sheet>`)");
    return;
  }
  for (const [i, p] of progresses.entries()) {
    const approval = approvals[i];
    const summary = ROW_STATES.filter((s) => p.counts[s] > 0)
      .map((s) => `${s} ${p.counts[s]}`)
      .join(", ");
    say(
      `${p.batch.id}  ${p.batch.createdAt}  ${p.batch.sourceName}  ${p.done}/${p.batch.rowCount} final  ${summary}` +
        (approval ? `  [${approval.status}]` : ""),
    );
  }
}
