/**
 * A problem found in a sheet: where (row as the user sees it in their spreadsheet, column as headed
 * there), a stable code to filter on, and a plain sentence saying what is wrong and what to do.
 */
export interface Problem {
  /** Row number in the user's spreadsheet; null for problems of the whole sheet (a missing column). */
  row: number | null;
  /** The column as headed in the user's sheet; null when the problem is not about one column. */
  column: string | null;
  code: ProblemCode;
  message: string;
}

export const PROBLEM_CODES = [
  // the sheet as a whole
  "COLUMN_MISSING",
  "METADATA_KEY_INVALID",
  "TOO_MANY_METADATA_COLUMNS",
  // control totals (a trailing total row, declared totals)
  "CONTROL_TOTAL_MISMATCH",
  "CONTROL_ROWS_MISMATCH",
  "CONTROL_TOTAL_UNREADABLE",
  "CONTROL_TOTAL_NOT_LAST",
  // cells
  "CELL_ERROR",
  "UNHEADED_CELL",
  "ID_PRECISION_LOST",
  // reference
  "REFERENCE_INVALID",
  "REFERENCE_TOO_LONG",
  "REFERENCE_DUPLICATE",
  // the same payment twice (in the sheet, or within the window of an earlier batch)
  "POSSIBLE_DUPLICATE",
  // accounts
  "FROM_ACCOUNT_MISSING",
  "FROM_ACCOUNT_NOT_FOUND",
  "FROM_ACCOUNT_NOT_INTERNAL",
  "FROM_ACCOUNT_NOT_VERIFIED",
  "TO_ACCOUNT_MISSING",
  "TO_ACCOUNT_NOT_FOUND",
  "TO_ACCOUNT_NOT_EXTERNAL",
  "TO_ACCOUNT_NO_RAIL",
  // currency and amount
  "CURRENCY_INVALID",
  "CURRENCY_UNKNOWN",
  "CURRENCY_MISMATCH",
  "AMOUNT_MISSING",
  "AMOUNT_INVALID",
  "AMOUNT_AMBIGUOUS",
  "AMOUNT_NEGATIVE",
  "AMOUNT_ZERO",
  "AMOUNT_TOO_PRECISE",
  "AMOUNT_TOO_LARGE",
  "AMOUNT_CURRENCY_MISMATCH",
  // delivery
  "DELIVERY_UNKNOWN",
  "DELIVERY_RAIL_MISMATCH",
  "DELIVERY_SUPERSEDED_FOR_CARD",
  "DELIVERY_VIRTUAL_CARD_FROM_CARD",
  "DELIVERY_NOT_ELIGIBLE",
  // entity limitations
  "OPERATION_NOT_ALLOWED",
  // text, metadata, attachments
  "TEXT_TOO_LONG",
  "METADATA_VALUE_TOO_LONG",
  "ATTACHMENT_NOT_FOUND",
  "ATTACHMENT_INVALID",
  "ATTACHMENT_TOO_LARGE",
  "ATTACHMENT_LINK",
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export function problem(
  row: number | null,
  column: string | null,
  code: ProblemCode,
  message: string,
): Problem {
  return { row, column, code, message };
}
