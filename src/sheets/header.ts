/**
 * Header matching: which of a sheet's columns are ours. Pure functions, no I/O.
 *
 * Headers match case-, space-, underscore-, hyphen- and dot-insensitively ("To Account", "to_account",
 * "TO-ACCOUNT"), with the aliases of src/sheet-columns/; a trailing `*` (a "required" marker) is ignored. Metadata
 * columns are `metadata.<key>`, `metadata:<key>` or `meta.<key>`; the key keeps its case.
 */
import { SHEET_COLUMN_RULES, SHEET_COLUMNS, type SheetColumnName } from "../sheet-columns/index.js";
import { columnLetter, type SheetColumn, SheetReadError } from "./types.js";

/** The sheet columns we read and their aliases are described in src/sheet-columns/. */
export { SHEET_COLUMNS, type SheetColumnName };

/** Lower-case, separators removed: "To_Account " and "to account" both become "toaccount". */
function matchKey(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\*+\s*$/, "")
    .replace(/[\s_\-.]+/g, "");
}

const CANONICAL_BY_KEY: ReadonlyMap<string, SheetColumnName> = new Map(
  SHEET_COLUMNS.flatMap((name) =>
    [name, ...SHEET_COLUMN_RULES[name].aliases].map((alias) => [matchKey(alias), name] as const),
  ),
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
  headerNames?: HeaderNames,
): { index: number; columns: SheetColumn[] } | undefined {
  const limit = Math.min(rows.length, HEADER_SEARCH_ROWS);
  for (let index = 0; index < limit; index++) {
    const cells = renamed(rows[index] ?? [], headerNames);
    if (isHeaderRow(cells)) return { index, columns: headerColumns(cells) };
  }
  return undefined;
}

/** A sheet's own header texts read as our column names (a column mapping): "Betrag" → "amount". */
export type HeaderNames = Readonly<Record<string, string>>;

function renamed(cells: readonly string[], names: HeaderNames | undefined): readonly string[] {
  if (!names) return cells;
  return cells.map((c) => {
    const own = c.replace(/^\uFEFF/, "").trim();
    return Object.hasOwn(names, own) ? names[own]! : c;
  });
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
