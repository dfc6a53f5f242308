/**
 * `payouts retry <batch> [--rows 3,7-9]`: a new attempt for the batch's rows that failed, were
 * rejected, errored or were canceled; every other requested row is listed with why it was left alone.
 * Needs Redis, and the Payouts Service for rows in `error` (the ledger is asked whether they paid
 * before they are paid again); the worker pays the retried rows.
 */
import type { Command } from "commander";
import { pipelineSettings } from "../../app/index.js";
import { loadConfig } from "../../config/index.js";
import { cliCaller, passGate } from "../../gate/index.js";
import { createPayoutsClient } from "../../payouts-api/index.js";
import { openPipeline } from "../../pipeline/index.js";
import { adoptedReason, parseRowSpec, RowSpecError } from "../../retries/index.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";
import { requireRedis } from "../redis-check.js";

interface RetryFlags {
  rows?: string;
  redisPrefix: string;
}

export function registerRetry(program: Command): void {
  program
    .command("retry")
    .description("Start a new attempt for a batch's failed, rejected, error or canceled rows")
    .argument("<batch>", "batch id")
    .option(
      "--rows <list>",
      "row numbers as the sheet shows them, ranges allowed: 3,7-9 (default: every retryable row)",
    )
    .addOption(redisPrefixOption())
    .addHelpText(
      "after",
      "\nEach retried row gets the next attempt number: a new Idempotency-Key and the externalId <reference>-r<attempt>." +
        "\nRows in flight (queued, submitted, in-progress) or paid (completed) are never retried." +
        "\nExit codes: 0 at least one row was retried, 1 nothing could be retried, 2 unknown batch or usage error.",
    )
    .action(async (batchId: string, flags: RetryFlags) => {
      process.exitCode = await runRetry(batchId, flags, {
        out: (line) => process.stdout.write(`${line}\n`),
        err: (line) => process.stderr.write(`${line}\n`),
      });
    });
}

export async function runRetry(
  batchId: string,
  flags: RetryFlags,
  say: { out: (line: string) => void; err: (line: string) => void },
): Promise<number> {
  let rows: number[] | undefined;
  try {
    rows = flags.rows === undefined ? undefined : parseRowSpec(flags.rows);
  } catch (err) {
    if (err instanceof RowSpecError) throw new CliError(`--rows: ${err.message}`, EXIT.usage);
    throw err;
  }
  const config = loadConfig();
  const pipeline = openPipeline(pipelineSettings(config, flags.redisPrefix, { failFast: true }));
  // Optional: without the service, rows in `error` are left alone with the reason (never paid blind).
  const ledger =
    config.apiUrl && config.apiKey
      ? createPayoutsClient({
          baseUrl: config.apiUrl,
          apiKey: config.apiKey,
          entityId: config.entityId,
          timeoutMs: config.apiTimeoutMs,
        })
      : undefined;
  try {
    await requireRedis(config, { prefix: flags.redisPrefix });
    const result = await passGate(
      { ...cliCaller(), pipeline },
      { kind: "retry", retry: { batchId, ledger, ...(rows ? { rows } : {}) } },
    );
    if (result.kind === "unknown-batch") {
      throw new CliError(`no batch ${batchId} in Redis (run \`payouts status\` to list batches)`, EXIT.usage);
    }
    for (const r of result.retried) {
      say.out(`row ${r.rowNumber}: retried as attempt ${r.attempt} (externalId ${r.externalId})`);
    }
    for (const r of result.adopted) say.out(`row ${r.rowNumber}: not retried: ${adoptedReason(r)}`);
    for (const r of result.leftAlone) say.out(`row ${r.rowNumber}: left alone: ${r.reason}`);
    if (result.retried.length === 0) {
      say.err(
        rows === undefined
          ? `nothing to retry in batch ${batchId}: no row failed, was rejected, errored or was canceled`
          : `nothing was retried in batch ${batchId}`,
      );
      return EXIT.inputProblems;
    }
    say.err(`${result.retried.length} row(s) queued again; \`payouts worker\` pays them`);
    return EXIT.ok;
  } finally {
    await pipeline.close();
    await ledger?.close();
  }
}
