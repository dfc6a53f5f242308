/**
 * The batch's intent on disk: `DATA_DIR/archive/<batchId>.instructions.ndjson`, written (atomically)
 * before anything is recorded in Redis. It is what a worker uses to finish an interrupted submission
 * and what `payouts recover` rebuilds the batch from when Redis lost it (docs/design.md §3.3).
 *
 * Line 1 is `{"kind":"batch", ...}`; then one `{"kind":"row", ...instruction}` per valid row and one
 * `{"kind":"invalid", ...}` per invalid row, in sheet order (or the valid rows first). An operator's
 * correction (a result file dropped back in) is appended as
 * `{"kind":"correction", "attempt", ...instruction}`: read back, the last correction of a row replaces
 * its instruction and cells and carries the attempt it started, so a batch rebuilt from the archive
 * pays the corrected row, never its original values.
 *
 * Beside the archives, `archive/files/<sha256>.batch` names the batch a file's content was accepted
 * as: the duplicate-file guard that survives the loss of Redis.
 */
import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { appendFile, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { PayoutsError } from "../errors/index.js";
import { writeFileAtomic } from "../files/index.js";
import type { PayoutInstruction } from "../intake/payout-instruction.js";
import type { BatchRecord, InvalidRowInput, SourceValues, SubmittedInstruction } from "./types.js";

export interface ArchivedBatch {
  batch: Pick<BatchRecord, "id" | "fileSha256" | "sourceName" | "entityId" | "createdAt"> &
    Partial<Pick<BatchRecord, "sheet" | "submittedBy" | "fileKey">>;
  /** The rows, with every correction applied (a corrected row carries its `attempt`). */
  instructions: SubmittedInstruction[];
  invalidRows: InvalidRowInput[];
}

export function archivePathFor(dataDir: string, batchId: string): string {
  return path.join(dataDir, "archive", `${batchId}.instructions.ndjson`);
}

function fileIndexPath(dataDir: string, fileSha256: string): string {
  return path.join(dataDir, "archive", "files", `${fileSha256.replace(/[^0-9a-zA-Z]/g, "")}.batch`);
}

/** Records on disk that a file's content was accepted as `batchId` (the newest batch wins). */
export async function recordArchivedFile(
  dataDir: string,
  fileSha256: string,
  batchId: string,
): Promise<void> {
  const target = fileIndexPath(dataDir, fileSha256);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFileAtomic(target, `${batchId}\n`);
}

/** The batch a file's content was accepted as, by the archive on disk (whatever Redis still holds). */
export async function archivedBatchForFile(dataDir: string, fileSha256: string): Promise<string | undefined> {
  try {
    return (await readFile(fileIndexPath(dataDir, fileSha256), "utf8")).trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Appends an operator's correction of a row to its batch's archive (one `appendFile` of one line:
 * a crash leaves the line whole or absent, and a half line is refused by the reader with its number).
 */
export async function appendCorrection(
  archivePath: string,
  correction: { instruction: PayoutInstruction; source?: SourceValues | undefined; attempt: number },
): Promise<void> {
  const { instruction, source, attempt } = correction;
  const line = { kind: "correction", ...instruction, ...(source ? { source } : {}), attempt };
  await appendFile(archivePath, `${JSON.stringify(line)}\n`);
}

const LINES_PER_WRITE = 1000;

/** Rows as a caller has them: an array, or a stream (a sheet being read, an archive being read back). */
export type RowSource<T> = Iterable<T> | AsyncIterable<T>;

/** What an archive is written from: the rows may be streams, so a batch of any size is never held whole. */
export interface ArchiveInput {
  batch: ArchivedBatch["batch"];
  instructions: RowSource<SubmittedInstruction>;
  invalidRows: RowSource<InvalidRowInput>;
}

/** What was written: the counts and money per currency (minor units) the batch record and the gate need. */
export interface ArchiveTally {
  rows: number;
  invalid: number;
  totals: Record<string, number>;
}

export async function writeInstructionArchive(target: string, archived: ArchiveInput): Promise<ArchiveTally> {
  await mkdir(path.dirname(target), { recursive: true });
  const tally: ArchiveTally = { rows: 0, invalid: 0, totals: {} };
  await writeFileAtomic(target, async (out) => {
    const lines: string[] = [JSON.stringify({ kind: "batch", ...archived.batch })];
    const flush = async () => {
      if (lines.length === 0) return;
      const ok = out.write(`${lines.join("\n")}\n`);
      lines.length = 0;
      if (!ok) await once(out, "drain");
    };
    for await (const row of archived.instructions) {
      tally.rows++;
      tally.totals[row.currency] = (tally.totals[row.currency] ?? 0) + row.amount;
      lines.push(JSON.stringify({ kind: "row", ...row }));
      if (lines.length >= LINES_PER_WRITE) await flush();
    }
    for await (const row of archived.invalidRows) {
      tally.invalid++;
      lines.push(JSON.stringify({ kind: "invalid", ...row }));
      if (lines.length >= LINES_PER_WRITE) await flush();
    }
    await flush();
  });
  return tally;
}

/** Rows staged in the archive's line format (a {@link RowStaging}), with what they add up to. */
export interface StagedRows {
  readonly path: string;
  readonly tally: ArchiveTally;
}

/**
 * The archive of rows already staged in its line format: the batch line, then the staged lines copied
 * as they are (rows and invalid rows in sheet order), never parsed or written out again.
 */
export async function archiveStagedRows(
  target: string,
  batch: ArchivedBatch["batch"],
  staged: StagedRows,
): Promise<ArchiveTally> {
  await mkdir(path.dirname(target), { recursive: true });
  await writeFileAtomic(target, async (out) => {
    if (!out.write(`${JSON.stringify({ kind: "batch", ...batch })}\n`)) await once(out, "drain");
    for await (const chunk of createReadStream(staged.path) as AsyncIterable<Buffer>) {
      if (!out.write(chunk)) await once(out, "drain");
    }
  });
  return staged.tally;
}

export class ArchiveFormatError extends PayoutsError {
  override readonly name = "ArchiveFormatError";
  constructor(message: string) {
    super("ARCHIVE_DAMAGED", message, { kind: "invalid-input" });
  }
}

/** One record of an archive as read back (corrections already applied to their rows). */
export type ArchiveEntry =
  | { kind: "batch"; batch: ArchivedBatch["batch"] }
  | { kind: "row"; instruction: SubmittedInstruction }
  | { kind: "invalid"; row: InvalidRowInput };

/** Reads an instruction archive whole; throws ArchiveFormatError naming the line of a damaged file. */
export async function readInstructionArchive(file: string): Promise<ArchivedBatch> {
  let batch: ArchivedBatch["batch"] | undefined;
  const instructions: SubmittedInstruction[] = [];
  const invalidRows: InvalidRowInput[] = [];
  for await (const entry of archiveEntries(file)) {
    if (entry.kind === "batch") batch = entry.batch;
    else if (entry.kind === "row") instructions.push(entry.instruction);
    else invalidRows.push(entry.row);
  }
  if (!batch?.id) throw new ArchiveFormatError(`${file}: no batch line`);
  return { batch, instructions, invalidRows };
}

/**
 * Streams an archive's records, the batch line first, in file order, with the last correction of each
 * row in place of its original: memory stays flat however many rows the batch has (the corrections,
 * few, are held). Throws ArchiveFormatError naming the line of a damaged file.
 */
export async function* archiveEntries(file: string): AsyncGenerator<ArchiveEntry> {
  // First pass: the corrections (appended after the rows, so they must be known before a row is handed out).
  const corrections = new Map<string, SubmittedInstruction>();
  for await (const line of recordLines(file, ["row", "invalid"])) {
    if (line.kind === "correction") {
      const corrected = line.record as unknown as SubmittedInstruction;
      corrections.set(corrected.rowKey, corrected);
    }
  }
  const corrected = new Set<string>();
  let sawBatch = false;
  for await (const line of recordLines(file)) {
    const record = line.record;
    switch (line.kind) {
      case "batch":
        sawBatch = true;
        yield { kind: "batch", batch: record as unknown as ArchivedBatch["batch"] };
        break;
      case "row": {
        if (!sawBatch) throw new ArchiveFormatError(`${file}: no batch line`);
        const original = record as unknown as SubmittedInstruction;
        const correction = corrections.get(original.rowKey);
        if (correction) corrected.add(original.rowKey);
        yield { kind: "row", instruction: correction ?? original };
        break;
      }
      case "invalid":
        yield { kind: "invalid", row: record as unknown as InvalidRowInput };
        break;
    }
  }
  if (!sawBatch) throw new ArchiveFormatError(`${file}: no batch line`);
  for (const rowKey of corrections.keys()) {
    if (!corrected.has(rowKey))
      throw new ArchiveFormatError(`${file}: a correction of unknown row ${rowKey}`);
  }
}

const KINDS = new Set(["batch", "row", "invalid", "correction"]);

/** How a line of each kind starts: the writers put the kind first. */
const LINE_START = { row: '{"kind":"row"', invalid: '{"kind":"invalid"' } as const;

/**
 * The archive's lines parsed, with their kind. `skip`: row or invalid lines (written with their kind
 * first) passed over unparsed, so a pass that wants the other kinds costs little.
 */
async function* recordLines(
  file: string,
  skip: readonly (keyof typeof LINE_START)[] = [],
): AsyncGenerator<{ kind: string; record: Record<string, unknown> }> {
  const skipped = skip.map((kind) => LINE_START[kind]);
  for await (const { text, number, terminated } of fileLines(file)) {
    if (text.trim() === "") continue;
    if (skipped.some((start) => text.startsWith(start))) continue;
    let parsed: { kind?: string } & Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      // A correction cut by a crash mid-append is the file's last, unterminated line: it never happened.
      if (!terminated) return;
      throw new ArchiveFormatError(`${file}:${number}: not JSON`);
    }
    const { kind, ...record } = parsed;
    if (typeof kind !== "string" || !KINDS.has(kind))
      throw new ArchiveFormatError(`${file}:${number}: unknown line kind ${JSON.stringify(kind)}`);
    yield { kind, record };
  }
}

/** A file's lines (UTF-8), streamed, with their 1-based number; `terminated` false only for a last line without a newline. */
async function* fileLines(
  file: string,
): AsyncGenerator<{ text: string; number: number; terminated: boolean }> {
  const decoder = new TextDecoder("utf-8");
  let partial = "";
  let number = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
    const text = partial + decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      yield { text: text.slice(start, end), number: ++number, terminated: true };
      start = end + 1;
    }
    partial = text.slice(start);
  }
  partial += decoder.decode();
  if (partial !== "") yield { text: partial, number: ++number, terminated: false };
}

/**
 * A scratch file of rows in the archive's line format (no batch line): where `payouts submit` puts the
 * rows while it validates a sheet, because whether anything is submitted is only known once the last
 * row is read. Read back as streams (once the whole sheet is accepted) and removed after; memory stays
 * that of a few hundred lines whatever the sheet's length.
 */
export class RowStaging implements StagedRows {
  /** Scratch files untouched this long belong to a submit that was killed (one is written to as it reads). */
  static readonly ABANDONED_AFTER_MS = 24 * 60 * 60 * 1000;

  private readonly lines: string[] = [];
  /** The rows added so far: counts and money per currency (minor units). */
  readonly tally: ArchiveTally = { rows: 0, invalid: 0, totals: {} };

  private constructor(
    readonly path: string,
    private readonly out: WriteStream,
  ) {}

  static async create(file: string): Promise<RowStaging> {
    await mkdir(path.dirname(file), { recursive: true });
    await removeAbandonedStaging(path.dirname(file));
    const out = createWriteStream(file, { flags: "w", mode: 0o600 });
    // A write error (ENOSPC) names no file; say which, for the one line the command ends with.
    out.on("error", (err: NodeJS.ErrnoException) => {
      err.path ??= file;
      err.syscall ??= "write";
    });
    await once(out, "open");
    return new RowStaging(file, out);
  }

  async addRow(row: SubmittedInstruction): Promise<void> {
    this.tally.rows++;
    this.tally.totals[row.currency] = (this.tally.totals[row.currency] ?? 0) + row.amount;
    await this.add(JSON.stringify({ kind: "row", ...row }));
  }

  async addInvalid(row: InvalidRowInput): Promise<void> {
    this.tally.invalid++;
    await this.add(JSON.stringify({ kind: "invalid", ...row }));
  }

  /** Writes what is buffered and closes the file: call before reading back. */
  async close(): Promise<void> {
    await this.flush();
    if (this.out.writableEnded) return;
    this.out.end();
    await once(this.out, "finish");
  }

  async remove(): Promise<void> {
    if (!this.out.writableEnded) this.out.destroy();
    await rm(this.path, { force: true });
  }

  private async add(line: string): Promise<void> {
    this.lines.push(line);
    if (this.lines.length >= LINES_PER_WRITE) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    const ok = this.out.write(`${this.lines.join("\n")}\n`);
    this.lines.length = 0;
    if (!ok) await once(this.out, "drain");
  }
}

/**
 * Removes the scratch files of submits that were killed before they could remove their own (the
 * archive holds what was submitted; a scratch file is never read again). Each file is checked by its
 * age, so a submit that is running beside this one keeps its file.
 */
async function removeAbandonedStaging(dir: string, nowMs = Date.now()): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!/^\.staging-.*\.ndjson$/.test(name)) continue;
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (info && nowMs - info.mtimeMs > RowStaging.ABANDONED_AFTER_MS) await rm(file, { force: true });
  }
}
