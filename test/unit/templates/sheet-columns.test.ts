/**
 * The sheet's columns are described once (src/sheet-columns/). The template and its help, the intake
 * checks, the header matching and the README's column table must all say the same: which columns are
 * required, which aliases mean them, and how long a value may be. Any of them drifting fails here.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkHeader, checkRow } from "../../../src/intake/check-row.js";
import { buildLiveContext } from "../../../src/intake/live-context.js";
import type { Account } from "../../../src/payouts-api/wire-types.js";
import {
  columnRule,
  METADATA_COLUMNS,
  SHEET_COLUMNS,
  type SheetColumnName,
} from "../../../src/sheet-columns/index.js";
import { canonicalColumn, headerColumns } from "../../../src/sheets/header.js";
import type { SheetCell, SheetHeader, SheetRow } from "../../../src/sheets/index.js";
import { TEMPLATE_COLUMNS } from "../../../src/templates/index.js";

const OPERATING = path.join(import.meta.dirname, "../../../docs/operating.md");
const LIMITED = SHEET_COLUMNS.filter((name) => columnRule(name).maxLength !== undefined);

function header(names: readonly string[]): SheetHeader {
  return {
    columns: headerColumns(names),
    headerRowNumber: 1,
    format: "csv",
    encoding: "utf-8",
    amountConvention: "dot",
  };
}

describe("the template says what the column description says", () => {
  it("has every column, required exactly when the description says so", () => {
    const ours = TEMPLATE_COLUMNS.filter((c) => !c.header.startsWith(METADATA_COLUMNS.prefix));
    expect(ours.map((c) => c.header)).toEqual([...SHEET_COLUMNS]);
    for (const column of ours) {
      expect([column.header, column.required]).toEqual([
        column.header,
        columnRule(column.header as SheetColumnName).required,
      ]);
    }
  });

  it("states each length limit in its help and checks it in the sheet", () => {
    for (const column of TEMPLATE_COLUMNS) {
      const max = column.header.startsWith(METADATA_COLUMNS.prefix)
        ? METADATA_COLUMNS.valueMax
        : columnRule(column.header as SheetColumnName).maxLength;
      const stated = [...column.meaning.matchAll(/at most (\d+) characters/g)].map((m) => Number(m[1]));
      if (!column.header.startsWith(METADATA_COLUMNS.prefix) || stated.length > 0) {
        expect([column.header, stated]).toEqual([column.header, max === undefined ? [] : [max]]);
      }
      const validated = column.validation?.kind === "max-length" ? column.validation.max : undefined;
      expect([column.header, validated]).toEqual([column.header, max]);
    }
  });

  it("calls reference optional and allows 200 characters, as intake does", () => {
    const reference = TEMPLATE_COLUMNS.find((c) => c.header === "reference");
    expect(reference?.required).toBe(false);
    expect(reference?.meaning).toContain("at most 200 characters");
  });
});

describe("intake checks what the column description says", () => {
  it("refuses a sheet without a column exactly when the column is required", () => {
    for (const name of SHEET_COLUMNS) {
      const codes = checkHeader(header(SHEET_COLUMNS.filter((n) => n !== name))).map((p) => p.code);
      expect([name, codes]).toEqual([name, columnRule(name).required ? ["COLUMN_MISSING"] : []]);
    }
  });

  it("matches every alias to its column", () => {
    for (const name of SHEET_COLUMNS) {
      for (const alias of columnRule(name).aliases)
        expect([alias, canonicalColumn(alias)]).toEqual([alias, name]);
    }
  });

  const now = "2026-01-01T00:00:00.000Z";
  const accounts = [
    { id: "acct_ops", externalId: "ops", ownershipType: "internal", type: "ach", isVerified: true },
    { id: "acct_vendor", externalId: "vendor", ownershipType: "external", type: "ach" },
  ].map((a) => ({ ...a, createdAt: now, updatedAt: now }) as Account);
  const live = buildLiveContext(accounts, {
    capabilities: [{ operation: "payment.domestic:write", allowed: true, reasons: [] }],
  });
  const rowHeader = header(["from_account", "to_account", "amount", ...LIMITED, "metadata.note"]);
  const text = (value: string): SheetCell => ({ text: value, kind: "string" });
  function problemsWith(column: string, value: string): Array<[string | null, string]> {
    const cells: Record<string, SheetCell> = {
      from_account: text("ops"),
      to_account: text("vendor"),
      amount: text("10.00"),
      [column]: text(value),
    };
    const row: SheetRow = { rowNumber: 2, cells };
    return checkRow(row, { live, header: rowHeader, sheetDir: "/tmp" }).problems.map((p) => [
      p.column,
      p.code,
    ]);
  }

  it("accepts a value of exactly the limit and refuses one character more, in that column", () => {
    const limits: Array<[string, number]> = [
      ...LIMITED.map((name) => [name, columnRule(name).maxLength!] as [string, number]),
      ["metadata.note", METADATA_COLUMNS.valueMax],
    ];
    for (const [column, max] of limits) {
      expect([column, problemsWith(column, "R".repeat(max))]).toEqual([column, []]);
      const refused = problemsWith(column, "R".repeat(max + 1));
      expect([column, refused.length, refused[0]?.[0]]).toEqual([column, 1, column]);
    }
  });
});

describe("the column table of docs/operating.md says what the column description says", () => {
  async function readmeTable(): Promise<Map<string, { required: string; meaning: string }>> {
    const readme = await readFile(OPERATING, "utf8");
    const section = readme.slice(readme.indexOf("## The payout sheet"));
    const rows = new Map<string, { required: string; meaning: string }>();
    for (const line of section.split("\n")) {
      const match = /^\| `([^`]+)` \| ([^|]+) \| (.+) \|$/.exec(line);
      if (match) rows.set(match[1]!, { required: match[2]!.trim(), meaning: match[3]! });
      else if (rows.size > 0) break;
    }
    return rows;
  }

  it("lists every column and no other, required exactly when the description says so", async () => {
    const table = await readmeTable();
    expect([...table.keys()]).toEqual([...SHEET_COLUMNS, "metadata.<key>"]);
    for (const name of SHEET_COLUMNS) {
      const said = table.get(name)!.required;
      expect([name, said.startsWith("yes")]).toEqual([name, columnRule(name).required]);
    }
  });

  it("states the same length limits", async () => {
    const table = await readmeTable();
    for (const name of SHEET_COLUMNS) {
      const stated = [...table.get(name)!.meaning.matchAll(/at most (\d+) characters/g)].map((m) =>
        Number(m[1]),
      );
      const max = columnRule(name).maxLength;
      expect([name, stated]).toEqual([name, max === undefined ? [] : [max]]);
    }
    const metadata = table.get("metadata.<key>")!.meaning;
    expect(metadata).toContain(`Keys 1–${METADATA_COLUMNS.keyMax} characters`);
    expect(metadata).toContain(`values at most ${METADATA_COLUMNS.valueMax} characters`);
    expect(metadata).toContain(`at most ${METADATA_COLUMNS.maxColumns} such columns`);
  });

  it("names only real aliases", async () => {
    const readme = await readFile(OPERATING, "utf8");
    const aliases = readme.slice(
      readme.indexOf("with aliases ("),
      readme.indexOf("## ", readme.indexOf("with aliases (")),
    );
    const pairs = [...aliases.matchAll(/`([^`]+)` → `([a-z_]+)`/g)];
    expect(pairs.length).toBeGreaterThan(0);
    for (const [, alias, name] of pairs) expect([alias, canonicalColumn(alias!)]).toEqual([alias, name]);
  });
});
