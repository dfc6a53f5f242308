/** `payouts validate <sheet>`: check every row against the live accounts; pay nothing. */
import path from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../../config/index.js";
import {
  defaultReportPath,
  summarizeValidation,
  summaryLines,
  validateSheet,
  writeValidationReport,
} from "../../intake/index.js";
import { SheetReadError } from "../../sheets/index.js";
import { connectApi } from "../api-connection.js";
import { CliError, EXIT } from "../exit-codes.js";
import { keepHeapLean } from "../lean-heap.js";
import { addExpectOptions, declaredTotalsFromFlags, type ExpectFlags } from "../options.js";

interface ValidateFlags extends ExpectFlags {
  report?: string;
  sheet?: string;
  sandbox?: boolean;
}

export function registerValidate(program: Command): void {
  const command = program
    .command("validate")
    .description("Validate a payout sheet (CSV or XLSX) against the live accounts; nothing is paid")
    .argument("<sheet>", "the payout sheet")
    .option("--report <path>", "where to write the report (.csv, .xlsx or .json); default next to the sheet")
    .option("--sheet <name>", "XLSX: the worksheet to read (default: the first with our header)")
    .option("--sandbox", "validate against the built-in sandbox instead of PAYOUTS_API_URL");
  addExpectOptions(command)
    .addHelpText(
      "after",
      "\nExit codes: 0 every row is valid, 1 some rows are invalid (see the report), 2 the file cannot be read or the service cannot be reached.",
    )
    .action(async (sheetPath: string, flags: ValidateFlags) => {
      keepHeapLean();
      process.exitCode = await runValidate(sheetPath, flags, (line) => process.stderr.write(`${line}\n`));
    });
}

export async function runValidate(
  sheetPath: string,
  flags: ValidateFlags,
  say: (line: string) => void,
): Promise<number> {
  const config = loadConfig();
  const declared = declaredTotalsFromFlags(flags);
  const reportPath = path.resolve(flags.report ?? defaultReportPath(sheetPath));
  const connection = await connectApi(config, {
    sandbox: flags.sandbox ? "always" : "never",
    missingApiHint: "(or pass --sandbox to validate against the built-in sandbox)",
  });
  try {
    const validation = await validateSheet(sheetPath, {
      api: connection.api,
      ...(flags.sheet === undefined ? {} : { sheet: flags.sheet }),
      ...(declared ? { declared } : {}),
    });
    const summary = await summarizeValidation(validation);
    await writeValidationReport(reportPath, summary.problems);
    for (const line of summaryLines(path.basename(sheetPath), summary)) say(line);
    say(`report: ${reportPath}`);
    if (summary.countsByCode.has("POSSIBLE_DUPLICATE"))
      say(
        "possible duplicates pay the same payee the same amount as another row: if both are meant, submit with --allow-possible-duplicates",
      );
    return summary.problems.length === 0 ? EXIT.ok : EXIT.inputProblems;
  } catch (err) {
    if (err instanceof SheetReadError)
      throw new CliError(`cannot read the sheet: ${err.message}`, EXIT.usage);
    throw err;
  } finally {
    await connection.close();
  }
}
