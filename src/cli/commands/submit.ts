/**
 * `payouts submit <sheet>`: validate and enqueue; prints the batch id. Nothing is paid here: the
 * worker (`payouts worker`) pays the queued rows.
 */
import path from "node:path";
import { type Command, Option } from "commander";
import { pipelineSettings } from "../../app/index.js";
import { loadConfig } from "../../config/index.js";
import { cliCaller, passGate } from "../../gate/index.js";
import { summaryLines } from "../../intake/index.js";
import { formatMinor } from "../../money/index.js";
import { openPipeline, type Pipeline } from "../../pipeline/index.js";
import { SheetReadError } from "../../sheets/index.js";
import {
  type CurrencyTotals,
  DuplicateFileError,
  type SubmitSheetOptions,
  type SubmitSheetOutcome,
  submitSheet,
} from "../../submission/index.js";
import { connectApi } from "../api-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { keepHeapLean } from "../lean-heap.js";
import {
  addExpectOptions,
  declaredTotalsFromFlags,
  type ExpectFlags,
  redisPrefixOption,
} from "../options.js";

interface SubmitFlags extends ExpectFlags {
  onInvalid: "reject" | "skip";
  dryRun?: boolean;
  allowDuplicateFile?: boolean;
  allowPossibleDuplicates?: boolean;
  sheet?: string;
  report?: string;
  redisPrefix: string;
}

export function registerSubmit(program: Command): void {
  const command = program
    .command("submit")
    .description("Validate a payout sheet and queue one payment per valid row; prints the batch id")
    .argument("<sheet>", "the payout sheet (CSV or XLSX)")
    .addOption(
      new Option(
        "--on-invalid <mode>",
        "reject: queue nothing if any row is invalid; skip: queue the valid rows",
      )
        .choices(["reject", "skip"])
        .default("reject"),
    )
    .option("--dry-run", "validate and show what would be queued; queue nothing")
    .option("--allow-duplicate-file", "accept a file whose exact content was submitted before (a new batch)")
    .option(
      "--allow-possible-duplicates",
      "pay rows flagged POSSIBLE_DUPLICATE (the same payee, amount and paying account as another row of the sheet or of a recent batch); recorded in the audit trail",
    )
    .option("--sheet <name>", "XLSX: the worksheet to read")
    .option("--report <path>", "where to write the validation report when rows are invalid")
    .addOption(redisPrefixOption());
  addExpectOptions(command)
    .addHelpText(
      "after",
      "\nExit codes: 0 submitted (or a clean dry run), 1 rows are invalid or the file was submitted before, 2 usage or environment error.",
    )
    .action(async (sheetPath: string, flags: SubmitFlags) => {
      keepHeapLean();
      process.exitCode = await runSubmit(sheetPath, flags, {
        out: (line) => process.stdout.write(`${line}\n`),
        err: (line) => process.stderr.write(`${line}\n`),
      });
    });
}

/** A dry run moves no money and needs no Redis; a submission goes through the one gate, as `cli:<os user>`. */
function submitThroughGate(
  pipeline: Pipeline | undefined,
  sheet: Omit<SubmitSheetOptions, "submittedBy">,
): Promise<SubmitSheetOutcome> {
  return pipeline ? passGate({ ...cliCaller(), pipeline }, { kind: "submit", sheet }) : submitSheet(sheet);
}

export async function runSubmit(
  sheetPath: string,
  flags: SubmitFlags,
  say: { out: (line: string) => void; err: (line: string) => void },
): Promise<number> {
  const config = loadConfig();
  const declared = declaredTotalsFromFlags(flags);
  const connection = await connectApi(config, { sandbox: "never" });
  const settings = pipelineSettings(config, flags.redisPrefix, { failFast: true });
  const pipeline = flags.dryRun === true ? undefined : openPipeline(settings);
  try {
    const sheet = {
      sheetPath,
      api: connection.api,
      pipeline: settings,
      entityId: config.entityId,
      onInvalid: flags.onInvalid,
      dryRun: flags.dryRun === true,
      allowDuplicateFile: flags.allowDuplicateFile === true,
      allowPossibleDuplicates: flags.allowPossibleDuplicates === true,
      ...(flags.sheet === undefined ? {} : { sheetName: flags.sheet }),
      ...(flags.report === undefined ? {} : { reportPath: flags.report }),
      ...(declared ? { declared } : {}),
    };
    const outcome: SubmitSheetOutcome = await submitThroughGate(pipeline, sheet);
    return reportOutcome(sheetPath, outcome, say);
  } catch (err) {
    if (err instanceof DuplicateFileError) throw new CliError(err.message, EXIT.inputProblems);
    if (err instanceof SheetReadError)
      throw new CliError(`cannot read the sheet: ${err.message}`, EXIT.usage);
    throw err;
  } finally {
    await pipeline?.close();
    await connection.close();
  }
}

/** What `payouts submit` says about a submission, and its exit code. */
function reportOutcome(
  sheetPath: string,
  outcome: SubmitSheetOutcome,
  say: { out: (line: string) => void; err: (line: string) => void },
): number {
  const name = path.basename(sheetPath);
  for (const line of summaryLines(name, outcome.summary)) say.err(line);
  if (outcome.reportPath) say.err(`report: ${outcome.reportPath}`);
  switch (outcome.kind) {
    case "invalid":
      if ([...outcome.summary.countsByCode.keys()].some((code) => code.startsWith("CONTROL_"))) {
        say.err("nothing was queued: the sheet does not match its control totals (see above)");
        return EXIT.inputProblems;
      }
      say.err(
        "nothing was queued: fix the rows above, or pass --on-invalid skip to queue only the valid rows",
      );
      if (outcome.summary.countsByCode.has("POSSIBLE_DUPLICATE"))
        say.err(
          "possible duplicates are held for a person: if every flagged row is meant to be paid, submit again with --allow-possible-duplicates",
        );
      return EXIT.inputProblems;
    case "nothing-to-pay":
      say.err("nothing was queued: the sheet has no valid rows");
      return EXIT.inputProblems;
    case "dry-run":
      for (const line of totalsLines(outcome.totals)) say.err(line);
      say.err("dry run: nothing was queued");
      return EXIT.ok;
    case "submitted":
      for (const line of totalsLines(outcome.totals)) say.err(line);
      if (outcome.possibleDuplicates > 0)
        say.err(
          `${outcome.possibleDuplicates} possible duplicate(s) confirmed with --allow-possible-duplicates (recorded in the audit trail)`,
        );
      if (outcome.resumed)
        say.err(`finished the interrupted submission of this file (batch ${outcome.batchId})`);
      if (outcome.awaitingApproval)
        say.err(
          `batch ${outcome.batchId} waits for approval: nothing is paid until an approver approves it ` +
            `(console, API, or \`payouts approve ${outcome.batchId}\`)`,
        );
      say.out(outcome.batchId);
      return EXIT.ok;
  }
}

function totalsLines(totals: CurrencyTotals): string[] {
  return Object.entries(totals)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, t]) => `  ${currency} ${formatMinor(t.amount, currency)} in ${t.rows} row(s)`);
}
