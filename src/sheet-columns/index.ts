/** The payout sheet's columns, described once (required, aliases, limits). */
export {
  columnRule,
  METADATA_COLUMNS,
  REFERENCE_MAX,
  REQUIRED_COLUMNS,
  RESERVED_METADATA_KEYS,
  SHEET_COLUMN_RULES,
  SHEET_COLUMNS,
  type SheetColumnName,
  type SheetColumnRule,
} from "./columns.js";
