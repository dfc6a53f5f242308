import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSheet } from "../../../src/sheets/index.js";
import type { SheetRow } from "../../../src/sheets/types.js";
import { checkMapping } from "../../../src/uploads/column-mapping.js";
import { headerSetKey, safeRelativePath, writeSheetCopy } from "../../../src/uploads/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "payouts-sheet-copy-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function read(file: string) {
  const opened = await openSheet(file);
  const rows: SheetRow[] = [];
  for await (const r of opened.rows) rows.push(r);
  return { header: opened.header, rows };
}

describe("a copy of a sheet with the console's corrections", () => {
  it.each(["payouts-mistakes.csv", "payouts-mistakes.xlsx"])(
    "keeps every other cell (numbers stay numbers) and every row number of %s",
    async (name) => {
      const source = path.resolve("samples", name);
      const before = await read(source);
      const target = path.join(dir, `copy-${name}`);
      const edited = before.rows[2]!;
      const written = await writeSheetCopy(source, target, {
        edits: new Map([[edited.rowNumber, { amount: "99.99" }]]),
        headers: { currency: "currency" },
      });
      const after = await read(target);
      expect(written).toBe(before.rows.length);
      expect(after.header.columns.map((c) => c.original)).toEqual(
        before.header.columns.map((c) => c.original),
      );
      expect(after.rows.map((r) => r.rowNumber)).toEqual(before.rows.map((r) => r.rowNumber));
      after.rows.forEach((row, i) => {
        for (const c of before.header.columns) {
          const was = before.rows[i]!.cells[c.key]!;
          const now = row.cells[c.key]!;
          if (row.rowNumber === edited.rowNumber && c.key === "amount") {
            expect(now.text).toBe("99.99");
            continue;
          }
          expect([row.rowNumber, c.key, now.text]).toEqual([row.rowNumber, c.key, was.text]);
          if (was.kind === "number" && !was.padded) expect(now.kind).toBe("number");
        }
      });
    },
  );
});

describe("file names and column mappings", () => {
  it("keeps a path inside the upload folder, or refuses it", () => {
    expect(safeRelativePath("april/attachments/inv 1.pdf")).toBe("april/attachments/inv 1.pdf");
    expect(safeRelativePath("a\\b.pdf")).toBe("a/b.pdf");
    expect(safeRelativePath("a/b?.pdf")).toBe("a/b_.pdf");
    for (const bad of ["../x.pdf", "/etc/passwd", "a/../../x", "C:/x.pdf", ".hidden", "__MACOSX/a/._b"]) {
      expect(safeRelativePath(bad)).toBeUndefined();
    }
  });

  it("knows a set of headers whatever its order and case, and checks a mapping against it", () => {
    expect(headerSetKey(["Betrag", "Konto"])).toBe(headerSetKey([" konto", "BETRAG"]));
    expect(headerSetKey(["Betrag"])).not.toBe(headerSetKey(["Betrag", "Konto"]));
    expect([...checkMapping({ amount: "Betrag" }, ["Konto", "Betrag"])]).toEqual([[1, "amount"]]);
    expect(() => checkMapping({ amount: "Summe" }, ["Betrag"])).toThrow(/no column headed "Summe"/);
    expect(() => checkMapping({ amout: "Betrag" }, ["Betrag"])).toThrow(/not one of our columns/);
    expect(() => checkMapping({ amount: "B", currency: "B" }, ["B"])).toThrow(/two of our columns/);
  });
});
