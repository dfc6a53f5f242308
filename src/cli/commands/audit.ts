/**
 * `payouts audit <batch> [--format csv|json] [-o PATH] [--json]`: holds every payment the service
 * holds for the batch against every row (src/ledger-audit), writes the differences as a report,
 * keeps the outcome on the batch and prints it. Exit 0 when the batch matches the ledger, 1 when it
 * does not, 2 for an unknown batch or a usage error.
 */
import path from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { loadConfig } from "../../config/index.js";
import {
  AUDIT_REPORT_FORMATS,
  type AuditReportFormat,
  auditAndRecord,
  defaultAuditPath,
  UnknownAuditBatchError,
} from "../../ledger-audit/index.js";
import { lookMarker, markForLook } from "../../reconcile/index.js";
import { connectApi } from "../api-connection.js";
import { withBatchStore } from "../batch-store-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { redisPrefixOption } from "../options.js";

interface AuditOptions {
  format?: AuditReportFormat;
  output?: string;
  json?: boolean;
  redisPrefix: string;
}

/** Differences printed on the terminal; the report has them all. */
const SHOWN = 20;

function parseFormat(value: string): AuditReportFormat {
  const lower = value.toLowerCase();
  if ((AUDIT_REPORT_FORMATS as readonly string[]).includes(lower)) return lower as AuditReportFormat;
  throw new InvalidArgumentError(`expected ${AUDIT_REPORT_FORMATS.join(" or ")}`);
}

export function registerAudit(program: Command): void {
  program
    .command("audit")
    .argument("<batch>", "batch id (see `payouts status`)")
    .description(
      "Hold the batch's rows against every payment the service holds for it; report the differences",
    )
    .option(
      "--format <format>",
      "report as csv or json (default: the -o file's extension, else csv)",
      parseFormat,
    )
    .option(
      "-o, --output <path>",
      "where to write the report (default: DATA_DIR/outbox/<sheet>.<batch>.ledger.<ext>)",
    )
    .option("--json", "print the outcome as JSON instead of text")
    .addOption(redisPrefixOption())
    .addHelpText(
      "after",
      "\nDifferences: missing-payment, unrecorded-payment, second-payment, payment-without-row," +
        "\namount-differs, currency-differs, payee-differs, state-differs." +
        "\nExit codes: 0 the batch matches the ledger, 1 it does not, 2 unknown batch or usage error.",
    )
    .action(async (batchId: string, opts: AuditOptions) => {
      process.exitCode = await runAudit(batchId, opts, (line) => process.stdout.write(`${line}\n`));
    });
}

export async function runAudit(
  batchId: string,
  opts: AuditOptions,
  say: (line: string) => void,
): Promise<number> {
  const fromPath = opts.output ? path.extname(opts.output).slice(1).toLowerCase() : "";
  const format =
    opts.format ??
    ((AUDIT_REPORT_FORMATS as readonly string[]).includes(fromPath)
      ? (fromPath as AuditReportFormat)
      : "csv");
  const config = loadConfig();
  const connection = await connectApi(config, { sandbox: "never" });
  const client = connection.api;
  try {
    return await withBatchStore(config, opts.redisPrefix, async (store) => {
      const batch = await store.getBatch(batchId);
      if (!batch) throw new CliError(new UnknownAuditBatchError(batchId).message, EXIT.usage);
      const reportPath = opts.output
        ? path.resolve(opts.output)
        : defaultAuditPath(config.dataDir, batch, format);
      const { report } = await auditAndRecord({
        store,
        client,
        batchId,
        follow: markForLook(lookMarker(store.redis, opts.redisPrefix)),
        reportTo: { path: reportPath, format },
      });
      if (opts.json) {
        say(JSON.stringify({ ...report, report: reportPath }, null, 2));
      } else {
        say(report.summary);
        say(`  ${report.rows} rows, ${report.payments} payments at the service (${report.pages} pages read)`);
        for (const d of report.differences.slice(0, SHOWN)) {
          say(`  ${d.kind}${d.rowNumber !== undefined ? ` row ${d.rowNumber}` : ""}: ${d.message}`);
        }
        if (report.differences.length > SHOWN) say(`  ... and ${report.differences.length - SHOWN} more`);
        if (report.behind > 0) {
          say(
            `  ${report.behind} row(s) have not followed their payment's newer state yet: they are marked for ` +
              "the worker, which makes them follow; run the audit again once it has looked",
          );
        }
        say(`report: ${reportPath}`);
      }
      return report.differences.length === 0 ? EXIT.ok : EXIT.inputProblems;
    });
  } finally {
    await connection.close();
  }
}
