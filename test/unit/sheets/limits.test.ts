/**
 * Hostile files: each is refused early, as the file's fault, with a message naming
 * the file, the limit's setting and what to do; never a stack, never gigabytes of memory.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type OpenSheetOptions,
  openSheet,
  readSheetIsolated,
  SheetReadAborted,
  SheetReadError,
} from "../../../src/sheets/index.js";
import {
  writeDtdWorkbook,
  writeGiantInlineCell,
  writeGiantSharedString,
  writeOversizedWorkbook,
  writeRowBomb,
} from "./hostile-xlsx.js";

const MiB = 1024 * 1024;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "payouts-limits-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readError(path: string, options: OpenSheetOptions = {}): Promise<SheetReadError> {
  try {
    const opened = await openSheet(path, options);
    for await (const _ of opened.rows);
  } catch (error) {
    if (error instanceof SheetReadError) return error;
    throw error;
  }
  throw new Error("expected a SheetReadError");
}

describe("XLSX files past the limits", () => {
  it("refuses a worksheet that inflates to a gigabyte of tiny rows before inflating it", async () => {
    const path = join(dir, "row-bomb.xlsx");
    await writeRowBomb(path, 1100 * MiB);
    const error = await readError(path);
    expect(error.code).toBe("LIMIT_EXCEEDED");
    expect(error.message).toMatch(/^row-bomb\.xlsx: xl\/worksheets\/sheet1\.xml inflates to/);
    expect(error.message).toContain("SHEET_MAX_INFLATE_RATIO");
  });

  it("refuses a worksheet larger than SHEET_MAX_PART_MB whatever its ratio", async () => {
    const path = join(dir, "big-sheet.xlsx");
    await writeRowBomb(path, 40 * MiB);
    const error = await readError(path, { limits: { maxPartBytes: 16 * MiB, maxInflateRatio: 1e9 } });
    expect(error.code).toBe("LIMIT_EXCEEDED");
    expect(error.message).toContain("SHEET_MAX_PART_MB");
  });

  it("refuses a part that inflates past the size its zip entry declares", async () => {
    const path = join(dir, "lying-bomb.xlsx");
    await writeRowBomb(path, 200 * MiB, 1000);
    const error = await readError(path);
    expect(error.code).toBe("FILE_CORRUPT");
    expect(error.message).toContain("more data than its zip entry declares");
  });

  it("refuses one giant shared string (a gigabyte from a one-megabyte file)", async () => {
    const path = join(dir, "giant-shared.xlsx");
    await writeGiantSharedString(path, 1000 * MiB);
    const error = await readError(path);
    expect(error.code).toBe("LIMIT_EXCEEDED");
    expect(error.message).toContain("xl/sharedStrings.xml");
  });

  it("refuses a shared string longer than a cell may be", async () => {
    const path = join(dir, "long-shared.xlsx");
    await writeGiantSharedString(path, 100_000);
    const error = await readError(path);
    expect(error.code).toBe("LIMIT_EXCEEDED");
    expect(error.message).toMatch(/^long-shared\.xlsx: shared string 1 holds more than 32767 characters/);
    expect(error.message).toContain("SHEET_MAX_CELL_CHARS");
  });

  it("refuses one giant inline cell, and a long one, without holding the whole row", async () => {
    const giant = join(dir, "giant-inline.xlsx");
    await writeGiantInlineCell(giant, 1000 * MiB);
    expect((await readError(giant)).code).toBe("LIMIT_EXCEEDED");

    const endless = join(dir, "endless-row.xlsx");
    await writeGiantInlineCell(endless, 40 * MiB);
    const rowError = await readError(endless, { limits: { maxInflateRatio: 1e9 } });
    expect(rowError.code).toBe("LIMIT_EXCEEDED");
    expect(rowError.message).toContain("SHEET_MAX_ROW_CHARS");

    const long = join(dir, "long-inline.xlsx");
    await writeGiantInlineCell(long, 100_000);
    const cellError = await readError(long);
    expect(cellError.message).toMatch(/^long-inline\.xlsx: cell A2 of sheet "Payouts" holds more than 32767/);
  });

  it("refuses a DTD in workbook.xml instead of expanding its entities", async () => {
    const path = join(dir, "dtd.xlsx");
    await writeDtdWorkbook(path);
    const error = await readError(path);
    expect(error.code).toBe("FILE_UNSAFE");
    expect(error.message).toMatch(/^dtd\.xlsx: xl\/workbook\.xml holds a document type declaration/);
  });

  it("refuses an oversized workbook.xml", async () => {
    const path = join(dir, "big-workbook.xlsx");
    await writeOversizedWorkbook(path, 40 * MiB);
    expect((await readError(path)).code).toBe("LIMIT_EXCEEDED"); // by its ratio, padding compresses well
    const error = await readError(path, { limits: { maxInflateRatio: 1e9 } });
    expect(error.code).toBe("LIMIT_EXCEEDED");
    expect(error.message).toContain("xl/workbook.xml inflates to more than 16 MiB");
    expect(error.message).toContain("SHEET_MAX_SMALL_PART_MB");
  });

  it("stops reading at the deadline", async () => {
    const path = join(dir, "slow.xlsx");
    await writeRowBomb(path, 300 * MiB);
    const error = await readError(path, { limits: { maxInflateRatio: 1e9, readTimeoutMs: 200 } });
    expect(error.code).toBe("LIMIT_EXCEEDED");
    expect(error.message).toContain("SHEET_READ_TIMEOUT_MS");
  });
});

describe("CSV files past the limits", () => {
  it("refuses a file larger than SHEET_MAX_FILE_MB, a cell too long and an endless line", async () => {
    const big = join(dir, "big.csv");
    await writeFile(big, `to_account,amount\n${"acct_1,5\n".repeat(300_000)}`);
    const sizeError = await readError(big, { limits: { maxFileBytes: MiB } });
    expect(sizeError.code).toBe("LIMIT_EXCEEDED");
    expect(sizeError.message).toMatch(/^big\.csv: the file is more than 1 MiB \(limit SHEET_MAX_FILE_MB\)/);

    const longCell = join(dir, "long-cell.csv");
    await writeFile(longCell, `to_account,amount,note\nacct_1,5,${"x".repeat(40_000)}\n`);
    const cellError = await readError(longCell);
    expect(cellError.message).toMatch(/^long-cell\.csv: line 2: the field in column C holds more than 32767/);

    const endless = join(dir, "endless.csv");
    await writeFile(endless, `to_account,amount\nacct_1,"${"x".repeat(3 * MiB)}\n`);
    const lineError = await readError(endless, { limits: { maxRowChars: MiB } });
    expect(lineError.code).toBe("LIMIT_EXCEEDED");
    expect(lineError.message).toContain("SHEET_MAX_ROW_CHARS");
  });
});

describe("readSheetIsolated", () => {
  it("reads a good sheet in a thread and counts its rows", async () => {
    const path = join(dir, "good.csv");
    await writeFile(path, "to_account,amount\nacct_1,5\nacct_2,6\n");
    expect(await readSheetIsolated(path)).toBe(2);
  });

  it("refuses a hostile file as the reader does, from the thread", async () => {
    const path = join(dir, "dtd-thread.xlsx");
    await writeDtdWorkbook(path);
    await expect(readSheetIsolated(path)).rejects.toMatchObject({ code: "FILE_UNSAFE" });
  });

  it("ends a thread that needs more memory than allowed; this process goes on", async () => {
    const path = join(dir, "memory.xlsx");
    // One row past every other limit, held whole until it ends: only the heap bound stops it.
    await writeGiantInlineCell(path, 60 * MiB);
    const limits = { maxInflateRatio: 1e9, maxRowChars: 1e9, maxCellChars: 1e9, readMaxMemoryMb: 16 };
    const good = join(dir, "good-small-heap.csv");
    await writeFile(good, "to_account,amount\nacct_1,5\n");
    expect(await readSheetIsolated(good, { limits })).toBe(1); // the bound leaves room for a sheet
    const error = await readSheetIsolated(path, { limits }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetReadError);
    expect((error as SheetReadError).code).toBe("LIMIT_EXCEEDED");
    expect((error as SheetReadError).message).toContain("SHEET_READ_MAX_MEMORY_MB");
  });

  it("terminates the thread when aborted", async () => {
    const path = join(dir, "abort.xlsx");
    await writeRowBomb(path, 1000 * MiB);
    const abort = new AbortController();
    const reading = readSheetIsolated(path, { limits: { maxInflateRatio: 1e9 }, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    await expect(reading).rejects.toBeInstanceOf(SheetReadAborted);
  });
});
