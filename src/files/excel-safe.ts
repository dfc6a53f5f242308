/**
 * Formula-injection guard for every cell we write (docs/design.md §3.7).
 *
 * Decision: text that Excel (or LibreOffice, Google Sheets) would read as the start of a formula
 * (`=`, `+`, `-`, `@`, tab, carriage return as its first character) gets a single quote `'` in
 * front, as the OWASP "CSV Injection" page advises. The same rule applies to CSV and XLSX output:
 * an XLSX string cell is not evaluated when opened, but it becomes a formula as soon as someone
 * edits the cell or re-saves the sheet as CSV, and the text must mean the same in both formats.
 * Real numbers are never escaped: writers emit them as numeric cells / unquoted CSV numbers, so
 * only strings pass through here (a negative amount typed as text, "-2", is shown as "'-2").
 *
 * The escape is exactly reversible with `undoExcelSafeText`, so a result file dropped back in reads
 * as the original text: text that already starts with quotes followed by a trigger character gets
 * one more quote, and undoing removes exactly one.
 */

/** Characters that make a spreadsheet treat the cell as a formula (OWASP list). */
export const FORMULA_TRIGGERS: readonly string[] = ["=", "+", "-", "@", "\t", "\r"];

const NEEDS_ESCAPE = /^'*[=+\-@\t\r]/;
const ESCAPED = /^'+[=+\-@\t\r]/;

/** Text that is safe to put in a spreadsheet cell: prefixed with `'` if it could start a formula. */
export function excelSafeText(value: string): string {
  return NEEDS_ESCAPE.test(value) ? `'${value}` : value;
}

/** Reverses `excelSafeText` (for reading back a result file we wrote). */
export function undoExcelSafeText(value: string): string {
  return ESCAPED.test(value) ? value.slice(1) : value;
}
