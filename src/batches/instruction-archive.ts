/**
 * The batch's intent on disk: `DATA_DIR/archive/<batchId>.instructions.ndjson`, written (atomically)
 * before anything is recorded in Redis. It is what a worker uses to finish an interrupted submission
 * and what `payouts recover` rebuilds the batch from when Redis lost it (docs/design.md §3.3).
 *
 * Line 1 is `{"kind":"batch", ...}`; then one `{"kind":"row", ...instruction}` per valid row and one
 * `{"kind":"invalid", ...}` per invalid row. An operator's correction (a result file dropped back in)
 * is appended as `{"kind":"correction", "attempt", ...instruction}`: read back, the last correction of
 * a row replaces its instruction and cells and carries the attempt it started, so a batch rebuilt
 * from the archive pays the corrected row, never its original values (issue 13, point 4).
 *
 * Beside the archives, `archive/files/<sha256>.batch` names the batch a file's content was accepted
 * as: the duplicate-file guard that survives the loss of Redis (issue 13, point 7).
 */
import { once } from "node:events";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
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

export async function writeInstructionArchive(target: string, archived: ArchivedBatch): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  await writeFileAtomic(target, async (out) => {
    const lines: string[] = [JSON.stringify({ kind: "batch", ...archived.batch })];
    const flush = async () => {
      if (lines.length === 0) return;
      const ok = out.write(`${lines.join("\n")}\n`);
      lines.length = 0;
      if (!ok) await once(out, "drain");
    };
    for (const row of archived.instructions) {
      lines.push(JSON.stringify({ kind: "row", ...row }));
      if (lines.length >= LINES_PER_WRITE) await flush();
    }
    for (const row of archived.invalidRows) {
      lines.push(JSON.stringify({ kind: "invalid", ...row }));
      if (lines.length >= LINES_PER_WRITE) await flush();
    }
    await flush();
  });
}

export class ArchiveFormatError extends Error {
  override readonly name = "ArchiveFormatError";
}

/** Reads an instruction archive; throws ArchiveFormatError naming the line of a damaged file. */
export async function readInstructionArchive(file: string): Promise<ArchivedBatch> {
  const text = await readFile(file, "utf8");
  let batch: ArchivedBatch["batch"] | undefined;
  const instructions: SubmittedInstruction[] = [];
  const invalidRows: InvalidRowInput[] = [];
  const corrections: SubmittedInstruction[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let parsed: { kind?: string } & Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      // A correction cut by a crash mid-append is the file's last, unterminated line: it never happened.
      if (i === lines.length - 1 && !text.endsWith("\n")) return;
      throw new ArchiveFormatError(`${file}:${i + 1}: not JSON`);
    }
    const { kind, ...rest } = parsed;
    if (kind === "batch") batch = rest as unknown as ArchivedBatch["batch"];
    else if (kind === "row") instructions.push(rest as unknown as SubmittedInstruction);
    else if (kind === "invalid") invalidRows.push(rest as unknown as InvalidRowInput);
    else if (kind === "correction") corrections.push(rest as unknown as SubmittedInstruction);
    else throw new ArchiveFormatError(`${file}:${i + 1}: unknown line kind ${JSON.stringify(kind)}`);
  });
  if (!batch?.id) throw new ArchiveFormatError(`${file}: no batch line`);
  if (corrections.length > 0) {
    const at = new Map(instructions.map((row, index) => [row.rowKey, index]));
    for (const corrected of corrections) {
      const index = at.get(corrected.rowKey);
      if (index === undefined)
        throw new ArchiveFormatError(`${file}: a correction of unknown row ${corrected.rowKey}`);
      instructions[index] = corrected;
    }
  }
  return { batch, instructions, invalidRows };
}
