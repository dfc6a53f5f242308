/**
 * CSV delimiter detection. Pure functions, no I/O.
 *
 * The delimiter is chosen on the header line itself: the first of the first 20 lines that, split by
 * one of `,` `;` tab `|`, names our header columns. Guessing from data rows (as papaparse does) is
 * fooled by decimal commas (`12,50;EUR`). Excel's `sep=;` first line wins when present.
 */
import { canonicalColumn, HEADER_SEARCH_ROWS, isHeaderRow } from "../header.js";

export const CSV_DELIMITERS = [",", ";", "\t", "|"] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

/** The delimiter an Excel `sep=X` first line declares, or undefined when the line is not one. */
export function parseSepLine(line: string): string | undefined {
  const match = /^"?sep=(.)"?\s*$/i.exec(line.replace(/^\uFEFF/, ""));
  return match?.[1];
}

/** Splits one line by `delimiter`, honouring double quotes; enough for header lines. */
export function splitCsvLine(line: string, delimiter: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell.trim() === "") {
      quoted = true;
      cell = "";
    } else if (ch === delimiter) {
      cells.push(cell);
      cell = "";
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

/**
 * Finds the delimiter from the first lines of a CSV: the line that is our header decides. Among
 * delimiters that make a header of that line, the one recognising most columns wins.
 * Returns undefined when no line within the first 20 is a header under any delimiter.
 */
export function detectDelimiter(
  lines: readonly string[],
): { delimiter: CsvDelimiter; lineIndex: number } | undefined {
  const limit = Math.min(lines.length, HEADER_SEARCH_ROWS);
  for (let lineIndex = 0; lineIndex < limit; lineIndex++) {
    const line = lines[lineIndex] ?? "";
    let best: { delimiter: CsvDelimiter; recognised: number } | undefined;
    for (const delimiter of CSV_DELIMITERS) {
      const cells = splitCsvLine(line, delimiter);
      if (!isHeaderRow(cells)) continue;
      const recognised = cells.filter((c) => canonicalColumn(c) !== null).length;
      if (!best || recognised > best.recognised) best = { delimiter, recognised };
    }
    if (best) return { delimiter: best.delimiter, lineIndex };
  }
  return undefined;
}

/** The evidence a delimiter gives about decimal marks: `;` is the list separator of decimal-comma locales. */
export function delimiterConventionEvidence(delimiter: string): "comma" | null {
  return delimiter === ";" ? "comma" : null;
}
