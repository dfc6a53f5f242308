/**
 * `payouts recover <batch id | archive file>`: rebuilds a batch after Redis lost it, from the archived
 * instructions plus the ledger (GET /payments by metadata and by externalId). Rows with a payment are
 * adopted; the others are enqueued again under the same keys, so a running worker pays nothing twice.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { pipelineSettings } from "../../app/index.js";
import { archivePathFor, readInstructionArchive } from "../../batches/index.js";
import { loadConfig, requireApi } from "../../config/index.js";
import { cliCaller, passGate } from "../../gate/index.js";
import { createPayoutsClient } from "../../payouts-api/index.js";
import { openPipeline } from "../../pipeline/index.js";
import { BATCH_ID_PATTERN } from "../../row-identity/index.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";
import { requireRedis } from "../redis-check.js";

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

export function registerRecover(program: Command): void {
  program
    .command("recover")
    .argument(
      "<batch>",
      "batch id, its archived sheet (DATA_DIR/archive/<batch>.csv|.xlsx) or its archived instructions (.instructions.ndjson)",
    )
    .description("Rebuild a batch's row states from the Payouts Service after Redis lost them")
    .addOption(redisPrefixOption())
    .action(async (target: string, opts: { redisPrefix: string }) => {
      const config = loadConfig();
      const api = requireApi(config);
      const archivePath = await instructionArchiveOf(target, config.dataDir);
      const archive = await readInstructionArchive(archivePath);
      const client = createPayoutsClient({
        baseUrl: api.apiUrl,
        apiKey: api.apiKey,
        entityId: api.entityId,
        timeoutMs: config.apiTimeoutMs,
      });
      await requireRedis(config, { prefix: opts.redisPrefix });
      const pipeline = openPipeline(pipelineSettings(config, opts.redisPrefix, { failFast: true }));
      try {
        const result = await passGate(
          { ...cliCaller(), pipeline },
          { kind: "recover", recover: { client, archive, archivePath } },
        );
        process.stdout.write(
          `recovered batch ${result.batchId}: ${result.rows} rows, ${result.adopted} adopted from the ledger, ` +
            `${result.rejected} rejected (reference reused), ${result.enqueued} enqueued again\n`,
        );
        if (!(await pipeline.gate.mayEnqueue(result.batchId))) {
          process.stdout.write(
            `batch ${result.batchId} waits for approval (APPROVAL_THRESHOLDS): its unpaid rows are queued once it is approved\n`,
          );
        }
      } finally {
        await pipeline.close();
        await client.close();
      }
    });
}

/**
 * The instructions archive a recover target names: a batch id (looked up in DATA_DIR/archive/), the
 * archived sheet `<batchId>.csv|.xlsx` (its instructions lie beside it), or the archive itself. The
 * archive, not the sheet, is what recovery replays: it holds the rows exactly as they were validated
 * and keyed, so rebuilding cannot pick a different account or amount than the one paid.
 */
async function instructionArchiveOf(target: string, dataDir: string): Promise<string> {
  if (await isFile(target)) {
    if (target.endsWith(".instructions.ndjson")) return target;
    const batchId = path.basename(target, path.extname(target));
    const beside = path.join(path.dirname(target), `${batchId}.instructions.ndjson`);
    if (BATCH_ID_PATTERN.test(batchId) && (await isFile(beside))) return beside;
    throw new CliError(
      `${target} is not an archived sheet of a batch (expected DATA_DIR/archive/<batch id>.csv or .xlsx with its .instructions.ndjson beside it)`,
      EXIT.usage,
    );
  }
  if (!BATCH_ID_PATTERN.test(target))
    throw new CliError(`${target} is neither a file nor a batch id`, EXIT.usage);
  const archivePath = archivePathFor(dataDir, target);
  if (!(await isFile(archivePath)))
    throw new CliError(`no archive for batch ${target} at ${archivePath}`, EXIT.usage);
  return archivePath;
}
