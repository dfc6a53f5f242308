/**
 * The batch's intent on disk: `DATA_DIR/archive/<batchId>.instructions.ndjson`, written (atomically)
 * before anything is recorded in Redis. It is what a worker uses to finish an interrupted submission
 * and what `payouts recover` rebuilds the batch from when Redis lost it (DESIGN rule 3).
 *
 * Line 1 is `{"kind":"batch", ...}`; then one `{"kind":"row", ...instruction}` per valid row and one
 * `{"kind":"invalid", ...}` per invalid row.
 */
import { once } from "node:events";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../files/index.js";
import type { BatchRecord, InvalidRowInput, SubmittedInstruction } from "./types.js";

export interface ArchivedBatch {
  batch: Pick<BatchRecord, "id" | "fileSha256" | "sourceName" | "entityId" | "createdAt"> &
    Partial<Pick<BatchRecord, "sheet" | "submittedBy">>;
  instructions: SubmittedInstruction[];
  invalidRows: InvalidRowInput[];
}

export function archivePathFor(dataDir: string, batchId: string): string {
  return path.join(dataDir, "archive", `${batchId}.instructions.ndjson`);
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
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let parsed: { kind?: string } & Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      throw new ArchiveFormatError(`${file}:${i + 1}: not JSON`);
    }
    const { kind, ...rest } = parsed;
    if (kind === "batch") batch = rest as unknown as ArchivedBatch["batch"];
    else if (kind === "row") instructions.push(rest as unknown as SubmittedInstruction);
    else if (kind === "invalid") invalidRows.push(rest as unknown as InvalidRowInput);
    else throw new ArchiveFormatError(`${file}:${i + 1}: unknown line kind ${JSON.stringify(kind)}`);
  });
  if (!batch?.id) throw new ArchiveFormatError(`${file}: no batch line`);
  return { batch, instructions, invalidRows };
}
