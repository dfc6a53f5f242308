/**
 * Header matching: which of a sheet's columns are ours. Pure functions, no I/O.
 *
 * Headers match case-, space-, underscore-, hyphen- and dot-insensitively ("To Account", "to_account",
 * "TO-ACCOUNT"), with the aliases below; a trailing `*` (a "required" marker) is ignored. Metadata
 * columns are `metadata.<key>`, `metadata:<key>` or `meta.<key>`; the key keeps its case.
 */
import { columnLetter, type SheetColumn, SheetReadError } from "./types.js";

/** The sheet columns we read (DESIGN "Sheet columns"), besides `metadata.<key>`. */
export const SHEET_COLUMNS = [
  "reference",
  "from_account",
  "to_account",
  "amount",
  "currency",
  "delivery",
  "payer_memo",
  "recipient_note",
  "purpose",
  "attachment",
] as const;
export type SheetColumnName = (typeof SHEET_COLUMNS)[number];

const ALIASES: Record<SheetColumnName, readonly string[]> = {
  reference: [
    "ref",
    "payment reference",
    "payout reference",
    "reference id",
    "external id",
    "your reference",
  ],
  from_account: [
    "from",
    "funding account",
    "source account",
    "paying account",
    "debit account",
    "originating account",
    "from acct",
  ],
  to_account: [
    "to",
    "payee",
    "payee account",
    "recipient account",
    "beneficiary account",
    "destination account",
    "receiving account",
    "to acct",
  ],
  amount: ["sum", "payout amount", "payment amount", "amt"],
  currency: ["ccy", "curr", "cur", "currency code"],
  delivery: ["delivery preference", "speed", "method", "delivery method", "delivery speed", "payment method"],
  payer_memo: ["memo", "internal memo", "internal note"],
  recipient_note: ["note", "description", "note to recipient", "remittance info", "remittance information"],
  purpose: ["payment purpose", "purpose code"],
  attachment: ["attachment id", "attachment path", "attachment file"],
};

/** Lower-case, separators removed: "To_Account " and "to account" both become "toaccount". */
function matchKey(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\*+\s*$/, "")
    .replace(/[\s_\-.]+/g, "");
}

const CANONICAL_BY_KEY: ReadonlyMap<string, SheetColumnName> = new Map(
  SHEET_COLUMNS.flatMap((name) => [name, ...ALIASES[name]].map((alias) => [matchKey(alias), name] as const)),
);

const METADATA_HEADER = /^(?:metadata|meta)\s*[.:]\s*(.+)$/i;

/** Our column name for a header cell, `metadata.<key>` for metadata columns, or null for other columns. */
export function canonicalColumn(header: string): string | null {
  const trimmed = header.replace(/^\uFEFF/, "").trim();
  const metadata = METADATA_HEADER.exec(trimmed);
  if (metadata?.[1]) return `metadata.${metadata[1].trim()}`;
  return CANONICAL_BY_KEY.get(matchKey(trimmed)) ?? null;
}

/** True when a row's cells name at least `to_account` and `amount`: that makes it the header row. */
export function isHeaderRow(cells: readonly string[]): boolean {
  const names = new Set(cells.map(canonicalColumn));
  return names.has("to_account") && names.has("amount");
}

/** How many rows from the top are searched for the header. */
export const HEADER_SEARCH_ROWS = 20;

/**
 * Finds the header among a sheet's first rows (title rows above it are skipped): the first row that
 * names at least `to_account` and `amount`. Returns its position in `rows` and its columns, or undefined.
 * Throws DUPLICATE_COLUMN when two columns mean the same thing.
 */
export function findHeader(
  rows: ReadonlyArray<readonly string[]>,
): { index: number; columns: SheetColumn[] } | undefined {
  const limit = Math.min(rows.length, HEADER_SEARCH_ROWS);
  for (let index = 0; index < limit; index++) {
    const cells = rows[index] ?? [];
    if (isHeaderRow(cells)) return { index, columns: headerColumns(cells) };
  }
  return undefined;
}

/** Builds the column list of a header row; extra columns keep their header text and order. */
export function headerColumns(cells: readonly string[]): SheetColumn[] {
  // Trailing empty header cells (a sheet formatted wider than its data) are not columns.
  let width = cells.length;
  while (width > 0 && (cells[width - 1] ?? "").trim() === "") width--;
  const columns: SheetColumn[] = [];
  const usedKeys = new Map<string, SheetColumn>();
  for (let index = 0; index < width; index++) {
    const original = (cells[index] ?? "").replace(/^\uFEFF/, "").trim();
    const canonical = original === "" ? null : canonicalColumn(original);
    const letter = columnLetter(index);
    if (canonical !== null) {
      const earlier = usedKeys.get(canonical);
      if (earlier && earlier.canonical === canonical) {
        throw new SheetReadError(
          "DUPLICATE_COLUMN",
          `columns ${earlier.letter} ("${earlier.original}") and ${letter} ("${original}") both mean ` +
            `"${canonical}"; rename or delete one of them`,
        );
      }
    }
    let key = canonical ?? (original || `column ${letter}`);
    if (usedKeys.has(key)) key = `${key} (column ${letter})`;
    const column: SheetColumn = { index, letter, original, canonical, key };
    usedKeys.set(key, column);
    columns.push(column);
  }
  return columns;
}

/** A short description of what the first rows contained, for HEADER_NOT_FOUND messages. */
export function describeHeaderSearch(rows: ReadonlyArray<readonly string[]>): string {
  const firstNonBlank = rows.find((cells) => cells.some((c) => c.trim() !== ""));
  const preview = firstNonBlank
    ?.filter((c) => c.trim() !== "")
    .slice(0, 8)
    .map((c) => `"${c.trim().slice(0, 30)}"`)
    .join(", ");
  return (
    `no header row with at least "to_account" and "amount" columns in the first ${HEADER_SEARCH_ROWS} rows` +
    (preview ? ` (first non-blank row: ${preview})` : "") +
    `; add a header row with the template's column names`
  );
}
