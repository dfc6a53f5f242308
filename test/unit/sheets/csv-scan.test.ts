/**
 * The CSV reader's first pass finds the header and the sheet's amount convention before any row is
 * handed out. Its quick scan (plain CSV, no records built) must find exactly what the full scan over
 * papaparse's records finds, for every text and however the text is cut into chunks; where it is unsure
 * it must step aside (answer undefined) so that the full scan decides and words any error.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CsvScan, csvRecords, scanCsvRecords, scanPlainCsv } from "../../../src/sheets/csv/index.js";

async function* chunksOf(pieces: readonly string[]): AsyncGenerator<string> {
  yield* pieces;
}

async function* oneRecordBatches<T>(records: AsyncIterable<T>): AsyncGenerator<T[]> {
  for await (const record of records) yield [record];
}

type FullScan = { scan: CsvScan } | { error: string };

async function fullScan(pieces: readonly string[], delimiter: string): Promise<FullScan> {
  try {
    return {
      scan: await scanCsvRecords(oneRecordBatches(csvRecords(chunksOf(pieces), delimiter)), delimiter),
    };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

async function quickScan(pieces: readonly string[], delimiter: string): Promise<CsvScan | undefined> {
  try {
    return await scanPlainCsv(chunksOf(pieces), delimiter);
  } catch {
    return undefined; // the reader then runs the full scan, as for undefined
  }
}

/** Cuts `text` at the given fractions of its length (in order), as a file arrives in read chunks. */
function cut(text: string, fractions: readonly number[]): string[] {
  const points = [...new Set(fractions.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(text.slice(from, point));
    from = point;
  }
  pieces.push(text.slice(from));
  return pieces;
}

const delimiters = fc.constantFrom(",", ";", "\t", "|");
/** Cell text with everything that makes CSV hard: delimiters, quotes, line breaks, amounts both ways. */
const cellText = fc.oneof(
  fc.constantFrom("", " ", "12.50", "1,234.56", "1.234,56", "12,5", "1,234", "1.234", "1250", "$12.00"),
  fc.array(fc.constantFrom(..."ab1.,;|\t\"\n '".split("")), { maxLength: 8 }).map((chars) => chars.join("")),
);
const HEADERS = [
  ["reference", "to_account", "amount", "currency", "purpose"],
  ["amount", "to_account"],
  ["Payee", "Amount", "Amount"], // a duplicate column: the full scan's error
  ["to", "sum", "ccy", "note", "metadata.x"],
];

/** A cell written the way spreadsheet tools write it: quoted when it must be, `""` for a quote. */
function encode(text: string, delimiter: string, quoteAlways: boolean): string {
  const needsQuotes = quoteAlways || text.includes(delimiter) || /["\n]/.test(text);
  return needsQuotes ? `"${text.replaceAll('"', '""')}"` : text;
}

interface Sheet {
  text: string;
  delimiter: string;
}

/** A sheet as tools write it: optional title and blank lines, the header, data rows of any width. */
const wellFormedSheet: fc.Arbitrary<Sheet> = fc
  .record({
    delimiter: delimiters,
    header: fc.constantFrom(...HEADERS),
    above: fc.array(fc.array(cellText, { minLength: 0, maxLength: 3 }), { maxLength: 3 }),
    rows: fc.array(fc.array(cellText, { minLength: 0, maxLength: 7 }), { maxLength: 12 }),
    quoteAlways: fc.boolean(),
    trailingNewline: fc.boolean(),
  })
  .map(({ delimiter, header, above, rows, quoteAlways, trailingNewline }) => {
    const line = (cells: readonly string[]) =>
      cells.map((c) => encode(c, delimiter, quoteAlways)).join(delimiter);
    const lines = [...above.map(line), line(header), ...rows.map(line)];
    return { delimiter, text: lines.join("\n") + (trailingNewline ? "\n" : "") };
  });

/** A well-formed sheet with a few characters changed: stray quotes, cut-off quoted fields, and so on. */
const damagedSheet: fc.Arbitrary<Sheet> = fc
  .tuple(
    wellFormedSheet,
    fc.array(
      fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom('"', ' "', '" ', "\n", "")),
      {
        minLength: 1,
        maxLength: 3,
      },
    ),
  )
  .map(([sheet, edits]) => {
    let text = sheet.text;
    for (const [where, insert] of edits) {
      const at = Math.floor(where * text.length);
      text = insert === "" ? text.slice(0, at) : text.slice(0, at) + insert + text.slice(at);
    }
    return { ...sheet, text };
  });

const fractions = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 });

describe("the CSV first pass", () => {
  it("finds with the quick scan what the full scan finds, whatever the chunks", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(wellFormedSheet, damagedSheet),
        fractions,
        async ({ text, delimiter }, at) => {
          const pieces = cut(text, at);
          const full = await fullScan(pieces, delimiter);
          const quick = await quickScan(pieces, delimiter);
          if (quick !== undefined) expect(full, JSON.stringify(text)).toEqual({ scan: quick });
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("answers with the quick scan for sheets written as tools write them", async () => {
    await fc.assert(
      fc.asyncProperty(wellFormedSheet, fractions, async ({ text, delimiter }, at) => {
        const pieces = cut(text, at);
        const full = await fullScan(pieces, delimiter);
        const quick = await quickScan(pieces, delimiter);
        // Only the sheets the full scan refuses (a duplicate column) are left to it.
        if ("scan" in full) expect(quick, JSON.stringify(text)).toEqual(full.scan);
        else expect(quick, JSON.stringify(text)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  it("steps aside for quotes papaparse reads leniently or refuses", async () => {
    const header = "to_account,amount\n";
    for (const body of [
      'vendor,12"50\n', //          a quote inside an unquoted field: papaparse keeps it
      'vendor,"12.50" \n', //       a space after the closing quote: papaparse drops it
      'vendor,"12.50"x\n', //       text after the closing quote: papaparse's InvalidQuotes
      'vendor,"12.50\n', //         a quote that never closes: papaparse's MissingQuotes
    ]) {
      expect(await quickScan([header + body], ","), body).toBeUndefined();
    }
    expect(await quickScan([`${header}vendor,"12,50"\n`], ",")).toMatchObject({
      headerLine: 1,
      headerIndex: 0,
      amountConvention: "comma",
    });
  });
});
