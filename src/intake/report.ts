/**
 * The validation report: one line per problem (row, column, code, message), in the format its file
 * name asks for, written atomically and safe to open in Excel. And the short summary for a terminal.
 */
import path from "node:path";
import { formatFromPath, writeTable } from "../files/index.js";
import type { Problem } from "./problems.js";
import type { ValidationSummary } from "./validate-sheet.js";

export const REPORT_COLUMNS = ["row", "column", "code", "message"] as const;

/** `payouts.xlsx` → `payouts.validation.xlsx` beside it; any other extension gets a CSV report. */
export function defaultReportPath(sheetPath: string): string {
  const ext = path.extname(sheetPath).toLowerCase();
  const base = path.basename(sheetPath, path.extname(sheetPath));
  return path.join(path.dirname(sheetPath), `${base}.validation${ext === ".xlsx" ? ".xlsx" : ".csv"}`);
}

export async function writeValidationReport(reportPath: string, problems: readonly Problem[]): Promise<void> {
  formatFromPath(reportPath); // refuses an extension we cannot write before any work is done
  await writeTable(reportPath, {
    columns: REPORT_COLUMNS,
    sheetName: "Problems",
    rows: problems.map((p) => [p.row, p.column ?? "", p.code, p.message]),
  });
}

/** A few lines for stderr: the verdict, counts by code, and the first problems. */
export function summaryLines(sheetName: string, summary: ValidationSummary, firstFew = 5): string[] {
  const lines: string[] = [];
  if (summary.problems.length === 0) {
    lines.push(`${sheetName}: all ${summary.rows} rows are valid`);
    return lines;
  }
  lines.push(
    `${sheetName}: ${summary.invalidRows} of ${summary.rows} rows invalid, ${summary.problems.length} problem(s)`,
  );
  const counts = [...summary.countsByCode.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const [code, count] of counts) lines.push(`  ${String(count).padStart(6)}  ${code}`);
  lines.push("first problems:");
  for (const p of summary.problems.slice(0, firstFew)) {
    const where = p.row === null ? "sheet" : `row ${p.row}`;
    lines.push(`  ${where}${p.column ? `, ${p.column}` : ""}: ${p.code}: ${p.message}`);
  }
  return lines;
}
