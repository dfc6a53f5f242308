/**
 * `payouts result <batch> [--format csv|xlsx] [-o PATH]`: writes the batch's result file as it
 * stands now (the same file the outbox keeps current and the HTTP route serves) and prints its path.
 */
import path from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { loadConfig } from "../../config/index.js";
import {
  RESULT_FORMATS,
  type ResultFormat,
  UnknownBatchError,
  writeResultFile,
} from "../../results/index.js";
import { withBatchStore } from "../batch-store-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";

interface ResultOptions {
  format?: ResultFormat;
  output?: string;
  redisPrefix: string;
}

function parseFormat(value: string): ResultFormat {
  const lower = value.toLowerCase();
  if ((RESULT_FORMATS as readonly string[]).includes(lower)) return lower as ResultFormat;
  throw new InvalidArgumentError(`expected ${RESULT_FORMATS.join(" or ")}`);
}

/** `--format`, else the `-o` file's extension, else undefined (the sheet's own format). */
export function chooseResultFormat(
  format: ResultFormat | undefined,
  output: string | undefined,
): ResultFormat | undefined {
  const ext = output === undefined ? "" : path.extname(output).slice(1).toLowerCase();
  const fromPath = (RESULT_FORMATS as readonly string[]).includes(ext) ? (ext as ResultFormat) : undefined;
  if (format !== undefined && fromPath !== undefined && format !== fromPath) {
    throw new CliError(`--format ${format} does not match the output file ${output}`, EXIT.usage);
  }
  return format ?? fromPath;
}

export function registerResult(program: Command): void {
  program
    .command("result")
    .argument("<batch>", "batch id (see `payouts status`)")
    .description("Write the batch's result file (every sheet column plus status columns) and print its path")
    .option("--format <format>", "csv or xlsx (default: the submitted sheet's format)", parseFormat)
    .option(
      "-o, --output <path>",
      "where to write it (default: DATA_DIR/outbox/<sheet>.<batch>.result.<ext>)",
    )
    .addOption(redisPrefixOption())
    .action(async (batchId: string, opts: ResultOptions) => {
      const format = chooseResultFormat(opts.format, opts.output);
      const config = loadConfig();
      await withBatchStore(config, opts.redisPrefix, async (store) => {
        const written = await writeResultFile(store, batchId, {
          format,
          outPath: opts.output,
          dataDir: config.dataDir,
        }).catch((err: unknown) => {
          if (err instanceof UnknownBatchError) throw new CliError(err.message, EXIT.usage);
          throw err;
        });
        process.stdout.write(`${written.path}\n`);
      });
    });
}
