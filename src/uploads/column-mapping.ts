/**
 * Mapping a sheet's own headers to our columns ("Betrag" → amount), when a sheet comes from a system
 * that heads its columns otherwise. A mapping is remembered per set of headers, so the next export
 * from the same system is mapped without asking. Applying one writes a copy of the sheet whose header
 * row carries our names (sheet-copy.ts; a CSV's first line is rewritten in place when its header could
 * not even be found), which is then validated and submitted like any sheet.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import Papa from "papaparse";
import { PayoutsError } from "../errors/index.js";
import { writeFileAtomic } from "../files/index.js";
import type { RedisClient } from "../redis/index.js";
import { SHEET_COLUMNS } from "../sheet-columns/index.js";

/** Our column → the sheet's header text. */
export type ColumnMapping = Record<string, string>;

export class MappingError extends PayoutsError {
  override readonly name = "MappingError";
  constructor(message: string) {
    super("INVALID_REQUEST", message, { kind: "usage" });
  }
}

/** Our columns a sheet may be mapped to (besides `metadata.<key>`). */
export const MAPPABLE_COLUMNS: readonly string[] = SHEET_COLUMNS;

const normal = (h: string) =>
  h
    .replace(/^\uFEFF/, "")
    .trim()
    .toLowerCase();

/** The identity of a set of headers (order and case do not matter). */
export function headerSetKey(headers: readonly string[]): string {
  const set = [...new Set(headers.map(normal).filter((h) => h !== ""))].sort();
  return createHash("sha256").update(JSON.stringify(set)).digest("hex").slice(0, 32);
}

/** Checks a mapping against the sheet's headers; the renames by header position. */
export function checkMapping(mapping: ColumnMapping, headers: readonly string[]): Map<number, string> {
  const renames = new Map<number, string>();
  for (const [ours, theirs] of Object.entries(mapping)) {
    if (!MAPPABLE_COLUMNS.includes(ours) && !/^metadata\.[^[\]]{1,40}$/.test(ours)) {
      throw new MappingError(`"${ours}" is not one of our columns (${MAPPABLE_COLUMNS.join(", ")})`);
    }
    const at = headers.indexOf(theirs);
    if (at < 0) throw new MappingError(`the sheet has no column headed "${theirs}"`);
    if (renames.has(at)) throw new MappingError(`"${theirs}" is mapped to two of our columns`);
    renames.set(at, ours);
  }
  return renames;
}

export class MappingMemory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private get key(): string {
    return `${this.prefix}:column-mappings`;
  }

  async remember(headers: readonly string[], mapping: ColumnMapping): Promise<void> {
    await this.redis.hset(this.key, headerSetKey(headers), JSON.stringify(mapping));
  }

  async recall(headers: readonly string[]): Promise<ColumnMapping | undefined> {
    const json = await this.redis.hget(this.key, headerSetKey(headers));
    return json ? (JSON.parse(json) as ColumnMapping) : undefined;
  }
}

/** The first non-blank line of a CSV as header cells, with the line's position (for a rewrite). */
export async function csvFirstLine(
  file: string,
): Promise<{ headers: string[]; delimiter: string } | undefined> {
  const text = (await readFile(file))
    .subarray(0, 64 * 1024)
    .toString("utf8")
    .replace(/^\uFEFF/, "");
  const line = text.split(/\r\n|\n|\r/).find((l) => l.trim() !== "");
  if (line === undefined) return undefined;
  const parsed = Papa.parse<string[]>(line, { delimitersToGuess: [",", ";", "\t", "|"] });
  const headers = parsed.data[0];
  return headers ? { headers, delimiter: parsed.meta.delimiter } : undefined;
}

/**
 * The row that most likely heads a worksheet with no header of ours: the first of its fullest rows
 * among the first ones (a title above the header fills fewer cells; data rows below fill as many).
 */
export function likelyHeaderRow(
  rows: readonly { rowNumber: number; cells: readonly string[] }[],
): { rowNumber: number; headers: string[] } | undefined {
  const filled = (cells: readonly string[]) => cells.filter((c) => c.trim() !== "").length;
  const most = Math.max(0, ...rows.map((r) => filled(r.cells)));
  // One filled cell is a title, not a header.
  if (most < 2) return undefined;
  const row = rows.find((r) => filled(r.cells) === most)!;
  const headers = row.cells.map((c) => c.trim());
  while (headers.length > 0 && headers.at(-1) === "") headers.pop();
  return { rowNumber: row.rowNumber, headers };
}

/** A mapping as the sheet reader takes it: the sheet's header text → our column. */
export function headerNamesOf(mapping: ColumnMapping): Record<string, string> {
  return Object.fromEntries(Object.entries(mapping).map(([ours, theirs]) => [theirs.trim(), ours]));
}

/** Rewrites a CSV's first non-blank line with the mapped headers; the rest of the file is untouched. */
export async function renameCsvHeader(file: string, renames: ReadonlyMap<number, string>): Promise<void> {
  const bytes = await readFile(file);
  const text = bytes.toString("utf8");
  const bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = text.slice(bom.length);
  const first = /^(?:[ \t]*(?:\r\n|\n|\r))*/.exec(body)![0];
  const rest = body.slice(first.length);
  const end = rest.search(/\r\n|\n|\r/);
  const found = await csvFirstLine(file);
  if (!found) throw new MappingError("the sheet has no header line");
  const headers = found.headers.map((h, i) => renames.get(i) ?? h);
  const newLine = Papa.unparse([headers], { delimiter: found.delimiter, newline: "" });
  await writeFileAtomic(file, async (out) => {
    out.write(bom + first + newLine + (end < 0 ? "" : rest.slice(end)));
  });
}
