/** Problems of a sheet as a whole, found from its header alone (src/sheet-columns/ says what is required). */
import { METADATA_MAX_KEYS } from "../payouts-api/wire-types.js";
import { METADATA_COLUMNS, REQUIRED_COLUMNS, RESERVED_METADATA_KEYS } from "../sheet-columns/index.js";
import type { SheetColumn, SheetHeader } from "../sheets/index.js";
import { type Problem, problem } from "./problems.js";

export function checkHeader(header: SheetHeader): Problem[] {
  const problems: Problem[] = [];
  const canonical = new Set(header.columns.map((c) => c.canonical));
  for (const name of REQUIRED_COLUMNS) {
    if (!canonical.has(name)) {
      problems.push(
        problem(
          null,
          name,
          "COLUMN_MISSING",
          `the sheet has no "${name}" column (header found on row ${header.headerRowNumber}); add it, or start from \`payouts template\``,
        ),
      );
    }
  }
  const metadataColumns = header.columns.filter((c) => c.canonical?.startsWith(METADATA_COLUMNS.prefix));
  if (metadataColumns.length > METADATA_COLUMNS.maxColumns) {
    problems.push(
      problem(
        null,
        null,
        "TOO_MANY_METADATA_COLUMNS",
        `the sheet has ${metadataColumns.length} metadata columns; at most ${METADATA_COLUMNS.maxColumns} fit (the service keeps ${METADATA_MAX_KEYS} keys and we add ${RESERVED_METADATA_KEYS.length})`,
      ),
    );
  }
  for (const column of metadataColumns) {
    const why = metadataKeyProblem(column);
    if (why) {
      const key = column.canonical!.slice(METADATA_COLUMNS.prefix.length);
      problems.push(
        problem(
          null,
          column.original,
          "METADATA_KEY_INVALID",
          `metadata key "${key}" ${why}; rename the column`,
        ),
      );
    }
  }
  return problems;
}

/** Why a `metadata.<key>` column's key cannot be used, or undefined when it can. */
function metadataKeyProblem(column: SheetColumn): string | undefined {
  const key = column.canonical!.slice(METADATA_COLUMNS.prefix.length);
  if (key.length === 0) return "is empty";
  if (key.length > METADATA_COLUMNS.keyMax) return `is longer than ${METADATA_COLUMNS.keyMax} characters`;
  if (/[[\]]/.test(key)) return "contains [ or ]";
  if ((RESERVED_METADATA_KEYS as readonly string[]).includes(key)) {
    return "is reserved for the batch and row the payment belongs to";
  }
  return undefined;
}
