/**
 * Reading one row's cells for the row checks: by our column name, with the problems found while
 * reading (an error cell, an id a spreadsheet has already rounded) reported once, at the cell.
 */

import { METADATA_COLUMNS } from "../sheet-columns/index.js";
import type { SheetCell, SheetColumn, SheetHeader, SheetRow } from "../sheets/index.js";
import { type Problem, type ProblemCode, problem } from "./problems.js";

const EMPTY_CELL: SheetCell = { text: "", kind: "empty" };

/** What the row checks need to know about a header, worked out once per header (rows are many, headers one). */
export interface HeaderPlan {
  /** Canonical column name → column. */
  byName: Map<string, SheetColumn>;
  /** The columns that are ours (a canonical name), in sheet order. */
  ours: SheetColumn[];
  /** The `metadata.<key>` columns in sheet order, with their canonical name and metadata key. */
  metadata: Array<{ column: SheetColumn; canonical: string; key: string }>;
}

const headerPlans = new WeakMap<SheetHeader, HeaderPlan>();
export function headerPlan(header: SheetHeader): HeaderPlan {
  const cached = headerPlans.get(header);
  if (cached) return cached;
  const plan: HeaderPlan = { byName: new Map(), ours: [], metadata: [] };
  for (const column of header.columns) {
    const canonical = column.canonical;
    if (!canonical) continue;
    plan.byName.set(canonical, column);
    plan.ours.push(column);
    if (canonical.startsWith(METADATA_COLUMNS.prefix)) {
      plan.metadata.push({ column, canonical, key: canonical.slice(METADATA_COLUMNS.prefix.length) });
    }
  }
  headerPlans.set(header, plan);
  return plan;
}

/** One row as the checks see it; every problem found goes to `problems`, in the order found. */
export interface RowReader {
  readonly row: SheetRow;
  readonly header: SheetHeader;
  readonly plan: HeaderPlan;
  readonly problems: Problem[];
  /** The cell under our column `name` (an empty cell when the sheet has no such column). */
  cell(name: string): SheetCell;
  /** True when the cell under `name` is an error cell (already reported). */
  broken(name: string): boolean;
  /**
   * The trimmed text under `name`; undefined when the cell cannot be read (an error cell, reported
   * once already; or an id with lost digits, reported now).
   */
  text(name: string): string | undefined;
  /** Reports a problem in our column `name` (shown with the sheet's own header). */
  report(name: string, code: ProblemCode, message: string): void;
  /** The cell's address as the spreadsheet shows it (`C7`). */
  where(name: string): string;
  /** A hint to add to "missing" messages when the cell is covered by a merged range. */
  mergedHint(name: string): string;
}

export function readRow(row: SheetRow, header: SheetHeader): RowReader {
  const plan = headerPlan(header);
  const problems: Problem[] = [];
  const columns = plan.byName;
  const cell = (name: string): SheetCell => {
    const column = columns.get(name);
    return column ? (row.cells[column.key] ?? EMPTY_CELL) : EMPTY_CELL;
  };
  const report = (name: string, code: ProblemCode, message: string) => {
    problems.push(problem(row.rowNumber, columns.get(name)?.original ?? name, code, message));
  };
  const where = (name: string) => {
    const column = columns.get(name);
    return column ? `${column.letter}${row.rowNumber}` : name;
  };
  let brokenColumns: Set<string> | undefined;
  const reader: RowReader = {
    row,
    header,
    plan,
    problems,
    cell,
    report,
    where,
    broken: (name) => brokenColumns?.has(name) === true,
    text(name) {
      if (brokenColumns?.has(name)) return undefined;
      const value = cell(name);
      if (value.lossy) {
        report(
          name,
          "ID_PRECISION_LOST",
          `cell ${where(name)} holds ${value.text}, a number of more than 15 digits: the spreadsheet has already replaced its last digits with zeros. Format the column as Text and type the id again`,
        );
        return undefined;
      }
      return value.text.trim();
    },
    mergedHint(name) {
      const merged = cell(name).mergedInto;
      return merged
        ? ` (cell ${where(name)} is part of the merged range ${merged}; unmerge it and fill every row)`
        : "";
    },
  };
  checkUnheadedCells(reader);
  brokenColumns = checkErrorCells(reader);
  return reader;
}

/**
 * A value right of the last headed column has no meaning we could give it, and in a CSV it is the
 * mark of a field split by an unquoted comma (`1,250.00` read as amount 1 and one cell too many):
 * never pay such a row.
 */
function checkUnheadedCells({ row, problems }: RowReader): void {
  if (!row.unheaded) return;
  for (const [letter, cell] of Object.entries(row.unheaded)) {
    if (cell.kind === "empty" || cell.text.trim() === "") continue;
    problems.push(
      problem(
        row.rowNumber,
        `column ${letter}`,
        "UNHEADED_CELL",
        `cell ${letter}${row.rowNumber} holds "${cell.text.trim()}" but its column has no header; usually a comma inside an unquoted value (such as 1,250.00) split it: quote that value, remove the thousands separator, or give the column a header`,
      ),
    );
    return;
  }
}

/**
 * Error cells first: a #REF! amount must say #REF!, not "amount missing". Returns the broken columns
 * (made only when a row has one: most rows have none).
 */
function checkErrorCells({ row, plan, problems }: RowReader): Set<string> | undefined {
  let broken: Set<string> | undefined;
  for (const column of plan.ours) {
    const cell = row.cells[column.key];
    if (cell?.kind !== "error") continue;
    broken ??= new Set<string>();
    broken.add(column.canonical!);
    const what =
      cell.error === "FORMULA_NOT_CALCULATED"
        ? "holds a formula without a calculated value; open the file in your spreadsheet, recalculate and save it"
        : `shows the error ${cell.text || cell.error}; fix the formula or type the value`;
    problems.push(
      problem(row.rowNumber, column.original, "CELL_ERROR", `cell ${column.letter}${row.rowNumber} ${what}`),
    );
  }
  return broken;
}
