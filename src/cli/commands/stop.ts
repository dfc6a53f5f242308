/**
 * `payouts pause|resume|cancel <batch>`: stop a running batch (src/batch-control). Pause: no row of it
 * is sent from now on (rows already sent finish). Resume: its rows never sent are queued again.
 * Cancel: its rows never sent are marked canceled and its payments still scheduled are canceled at the
 * service. Each is kept in the audit trail as `cli:<os user>`. Needs Redis (and, to cancel, the service).
 */
import type { Command } from "commander";
import { pipelineSettings } from "../../app/index.js";
import { AuditTrail } from "../../audit/index.js";
import { cancelBatch, pauseBatch, resumeBatch, StopRefusedError } from "../../batch-control/index.js";
import { loadConfig, requireApi } from "../../config/index.js";
import { cliCaller } from "../../gate/index.js";
import { createPayoutsClient } from "../../payouts-api/index.js";
import { connectRedis, openPipeline, type Pipeline } from "../../pipeline/index.js";
import { createReconcileQueue, sweepSoon } from "../../reconcile/index.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";

interface StopFlags {
  reason?: string;
  redisPrefix: string;
}

type Say = { out: (line: string) => void; err: (line: string) => void };
const say: Say = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export function registerStop(program: Command): void {
  program
    .command("pause")
    .description("Pause a batch: none of its rows is sent until it is resumed (rows already sent finish)")
    .argument("<batch>", "batch id")
    .option("--reason <text>", "why, for the audit trail and the console's banner")
    .addOption(redisPrefixOption())
    .action(async (batchId: string, flags: StopFlags) => {
      process.exitCode = await runStop("pause", batchId, flags, say);
    });
  program
    .command("resume")
    .description("Resume a paused batch: its rows never sent are queued again")
    .argument("<batch>", "batch id")
    .addOption(redisPrefixOption())
    .action(async (batchId: string, flags: StopFlags) => {
      process.exitCode = await runStop("resume", batchId, flags, say);
    });
  program
    .command("cancel")
    .description(
      "Cancel a batch: rows never sent become canceled, payments still scheduled are canceled at the service",
    )
    .argument("<batch>", "batch id")
    .addOption(redisPrefixOption())
    .addHelpText(
      "after",
      "\nRows already on their way (in progress) or paid keep their course. The batch then finishes: final result file, notification." +
        "\nExit codes: 0 done, 1 refused (the batch is finished, or canceled already), 2 unknown batch or usage error.",
    )
    .action(async (batchId: string, flags: StopFlags) => {
      process.exitCode = await runStop("cancel", batchId, flags, say);
    });
}

export async function runStop(
  action: "pause" | "resume" | "cancel",
  batchId: string,
  flags: StopFlags,
  out: Say,
): Promise<number> {
  const config = loadConfig();
  const pipeline = openPipeline(pipelineSettings(config, flags.redisPrefix, { failFast: true }));
  const audit = new AuditTrail(pipeline.redis, flags.redisPrefix);
  const { actor } = cliCaller();
  try {
    await pipeline.redis.ping().catch((err: Error) => {
      throw new CliError(`cannot reach Redis at REDIS_URL: ${err.message}`, EXIT.usage);
    });
    let detail: Record<string, unknown>;
    try {
      detail = await act(action, batchId, flags, pipeline, config, actor.name, out);
    } catch (err) {
      if (!(err instanceof StopRefusedError)) throw err;
      await audit.record({
        actor,
        action: `batch.${action}`,
        target: batchId,
        from: "cli",
        outcome: "denied",
        detail: { refusal: err.refusal },
      });
      throw new CliError(err.message, err.refusal === "unknown-batch" ? EXIT.usage : EXIT.inputProblems);
    }
    await audit.record({
      actor,
      action: `batch.${action}`,
      target: batchId,
      from: "cli",
      outcome: "ok",
      detail,
    });
    return EXIT.ok;
  } finally {
    await pipeline.close();
  }
}

async function act(
  action: "pause" | "resume" | "cancel",
  batchId: string,
  flags: StopFlags,
  pipeline: Pipeline,
  config: ReturnType<typeof loadConfig>,
  by: string,
  out: Say,
): Promise<Record<string, unknown>> {
  if (action === "pause") {
    const reason = flags.reason?.trim() || "paused by an operator";
    const paused = await pauseBatch(pipeline.store, batchId, { by, reason });
    out.err(
      paused
        ? `batch ${batchId} paused: none of its rows is sent until \`payouts resume ${batchId}\``
        : `batch ${batchId} was already paused`,
    );
    return { reason, changed: paused };
  }
  if (action === "resume") {
    const queued = await resumeBatch(pipeline.store, pipeline.enqueuer, pipeline.gate, batchId);
    out.err(
      `batch ${batchId} resumed: ${queued} row(s) never sent are queued again; \`payouts worker\` pays them`,
    );
    return { queued };
  }
  const api = requireApi(config);
  const client = createPayoutsClient({
    baseUrl: api.apiUrl,
    apiKey: api.apiKey,
    entityId: api.entityId,
    timeoutMs: config.apiTimeoutMs,
  });
  try {
    const outcome = await cancelBatch(pipeline.store, client, batchId, { by });
    const connection = connectRedis(pipelineSettings(config, pipeline.prefix), { failFast: true });
    const queue = createReconcileQueue(connection, pipeline.prefix);
    try {
      await sweepSoon(queue);
    } catch {
      // The cancel is done; only its batch's end waits for the worker's next sweep.
      out.err("(could not ask the worker to finish the batch now: it does at its next reconcile sweep)");
    } finally {
      await queue.close().catch(() => undefined);
      connection.disconnect();
    }
    out.err(
      `batch ${batchId} canceled: ${outcome.unsent} row(s) never sent marked canceled, ` +
        `${outcome.canceledAtService} scheduled payment(s) canceled at the service, ${outcome.leftAlone} row(s) already on their way or final left alone` +
        (outcome.notCanceled.length > 0
          ? `, ${outcome.notCanceled.length} payment(s) the service would not cancel (already on their way)`
          : ""),
    );
    return { ...outcome, notCanceled: outcome.notCanceled.length };
  } finally {
    await client.close();
  }
}
