/**
 * Control totals: a sheet ending with a total row (as accounting exports do) is checked against its
 * valid rows instead of being read as a payout; declared totals the same. Real CSV and XLSX files in a
 * temporary folder, live data built from fixed accounts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import ExcelJS from "exceljs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { declaredTotalsOf, parseDeclaredTotal } from "../../../src/intake/control-totals.js";
import { buildLiveContext } from "../../../src/intake/live-context.js";
import {
  type IntakeApi,
  type SheetValidation,
  summarizeValidation,
  validateSheet,
} from "../../../src/intake/validate-sheet.js";
import { account } from "./live-accounts.js";

const international = (currency: string) => ({ currency, accountNumberLast4: "0001", address: {} });
const live = buildLiveContext(
  [
    account("ops-checking", "internal", "ach"),
    account("vendor-ach", "external", "ach"),
    account("supplier-jpy", "external", "international-fx", { international: international("JPY") }),
    account("supplier-kwd", "external", "international-fx", { international: international("KWD") }),
  ],
  {
    capabilities: [
      { operation: "payment.domestic:write", allowed: true, reasons: [] },
      { operation: "payment.international:write", allowed: true, reasons: [] },
    ],
  },
);
const api: IntakeApi = {
  accounts: { listAll: () => Promise.reject(new Error("live data is given")) },
  limitations: { get: () => Promise.reject(new Error("live data is given")) },
  tools: { fastPaymentEligibility: () => Promise.reject(new Error("no faster delivery in these sheets")) },
} as unknown as IntakeApi;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "control-totals-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HEADER = "reference,from_account,to_account,amount,currency";
const ROWS = ["P-1,ops-checking,vendor-ach,1250.00,USD", "P-2,ops-checking,vendor-ach,250.50,USD"];

async function csv(name: string, lines: string[]): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}

async function validate(file: string, declared?: Parameters<typeof validateSheet>[1]["declared"]) {
  const validation: SheetValidation = await validateSheet(file, {
    api,
    live,
    ...(declared ? { declared } : {}),
  });
  return summarizeValidation(validation);
}

describe("a trailing total row", () => {
  it("is not read as a payout (nor as an invalid row) when it matches the valid rows", async () => {
    const summary = await validate(await csv("ok.csv", [HEADER, ...ROWS, "Total,,,1500.50,USD"]));
    expect(summary.problems).toEqual([]);
    expect(summary.rows).toBe(2);
    expect(summary.validRows).toBe(2);
  });

  it("may stand in the reference column, with the currency in its label or none at all", async () => {
    for (const line of [",,,1500.50,", "TOTAL USD,,,1500.50,", 'Sum:,,,"1,500.50",']) {
      const label = line.split(",")[0] || "Grand total";
      const summary = await validate(
        await csv("label.csv", [HEADER, ...ROWS, line.startsWith(",") ? `${label}${line}` : line]),
      );
      expect(summary.problems, line).toEqual([]);
      expect(summary.rows).toBe(2);
    }
  });

  it("refuses the sheet when it does not match, naming the total found and the total stated", async () => {
    const summary = await validate(await csv("bad.csv", [HEADER, ...ROWS, "Totals,,,1600.50,USD"]));
    expect(summary.problems).toHaveLength(1);
    const [p] = summary.problems;
    expect(p).toMatchObject({ row: 4, column: "amount", code: "CONTROL_TOTAL_MISMATCH" });
    expect(p!.message).toContain("USD 1600.50");
    expect(p!.message).toContain("USD 1500.50");
  });

  it("does not count invalid rows into the found total, and says so", async () => {
    const summary = await validate(
      await csv("invalid.csv", [HEADER, ...ROWS, "P-3,ops-checking,nobody,10.00,USD", "Total,,,1510.50,USD"]),
    );
    const codes = summary.problems.map((p) => p.code);
    expect(codes).toContain("TO_ACCOUNT_NOT_FOUND");
    const mismatch = summary.problems.find((p) => p.code === "CONTROL_TOTAL_MISMATCH");
    expect(mismatch?.message).toMatch(/1 row\(s\) are invalid/);
  });

  it("never takes a row naming a payee for a total, and flags a total row that is not last", async () => {
    const payee = await validate(
      await csv("payee.csv", [HEADER, ...ROWS, "Total,ops-checking,vendor-ach,5.00,USD"]),
    );
    expect(payee.problems).toEqual([]);
    expect(payee.validRows).toBe(3);
    const early = await validate(await csv("early.csv", [HEADER, ROWS[0]!, "Total,,,1250.00,USD", ROWS[1]!]));
    expect(early.problems.map((p) => p.code)).toContain("CONTROL_TOTAL_NOT_LAST");
    expect(early.validRows).toBe(2);
  });

  it("without a readable amount refuses the sheet and says which cell", async () => {
    const summary = await validate(await csv("blank.csv", [HEADER, ...ROWS, "Total,,,,USD"]));
    expect(summary.problems.map((p) => [p.row, p.code])).toEqual([[4, "CONTROL_TOTAL_UNREADABLE"]]);
    expect(summary.problems[0]!.message).toContain("D4");
  });

  it("is read from an XLSX whose total is a SUM formula, and refuses a wrong one", async () => {
    const write = async (name: string, sum: number) => {
      const workbook = new ExcelJS.Workbook();
      const sheet = workbook.addWorksheet("Payouts");
      sheet.addRow(HEADER.split(","));
      sheet.addRow(["P-1", "ops-checking", "vendor-ach", 1250, "USD"]);
      sheet.addRow(["P-2", "ops-checking", "vendor-ach", 250.5, "USD"]);
      sheet.addRow(["Total", null, null, { formula: "SUM(D2:D3)", result: sum }, "USD"]);
      const file = path.join(dir, name);
      await workbook.xlsx.writeFile(file);
      return file;
    };
    const good = await validate(await write("good.xlsx", 1500.5));
    expect(good.problems).toEqual([]);
    expect(good.rows).toBe(2);
    const bad = await validate(await write("bad.xlsx", 1400.5));
    expect(bad.problems.map((p) => [p.row, p.code])).toEqual([[4, "CONTROL_TOTAL_MISMATCH"]]);
  });
});

describe("a total row's amount", () => {
  it("is read like the rows' amounts: thousands separators, the sheet's decimal comma, 0 and 3 decimals", async () => {
    const dot = await validate(
      await csv("dot.csv", [
        HEADER,
        'P-1,ops-checking,vendor-ach,"1,000.25",USD',
        "P-2,ops-checking,vendor-ach,234.25,USD",
        'Total,,,"1,234.50",USD',
      ]),
    );
    expect(dot.problems).toEqual([]);
    expect(dot.validRows).toBe(2);

    const comma = await validate(
      await csv("comma.csv", [
        HEADER.replaceAll(",", ";"),
        "P-1;ops-checking;vendor-ach;1.000,25;USD",
        "P-2;ops-checking;vendor-ach;234,25;USD",
        "Total;;;1.234,50;USD",
      ]),
    );
    expect(comma.problems).toEqual([]);

    const fx = `${HEADER},purpose`;
    const yen = await validate(
      await csv("jpy.csv", [
        fx,
        "P-1,ops-checking,supplier-jpy,150000,JPY,Components",
        "P-2,ops-checking,supplier-jpy,34500,JPY,Components",
        "P-3,ops-checking,vendor-ach,12.50,USD,",
        "Total JPY,,,184500,JPY",
        'Total USD,,,"12.50",',
      ]),
    );
    expect(yen.problems).toEqual([]);
    const dinar = await validate(
      await csv("kwd.csv", [
        fx,
        'P-1,ops-checking,supplier-kwd,"1,250.500",KWD,Components',
        "P-2,ops-checking,supplier-kwd,0.125,KWD,Components",
        'Total,,,"1,250.625",KWD',
      ]),
    );
    expect(dinar.problems).toEqual([]);
    const tooPrecise = await validate(
      await csv("kwd-wrong.csv", [
        fx,
        "P-1,ops-checking,supplier-kwd,0.125,KWD,Components",
        "Total,,,0.1250,KWD",
      ]),
    );
    expect(tooPrecise.problems).toEqual([]);
    const yenWithDecimals = await validate(
      await csv("jpy-wrong.csv", [
        fx,
        "P-1,ops-checking,supplier-jpy,150000,JPY,Components",
        "Total,,,150000.5,JPY",
      ]),
    );
    expect(yenWithDecimals.problems.map((p) => p.code)).toEqual(["CONTROL_TOTAL_UNREADABLE"]);
    expect(yenWithDecimals.problems[0]!.message).toMatch(/more decimals than JPY allows/);
  });
});

describe("declared totals", () => {
  it("pass when they match and refuse the sheet with both figures when they do not", async () => {
    const file = await csv("declared.csv", [HEADER, ...ROWS]);
    expect((await validate(file, declaredTotalsOf(2, ["USD:1500.50"]))).problems).toEqual([]);
    const wrongTotal = await validate(file, declaredTotalsOf(undefined, ["USD:125000.00"]));
    expect(wrongTotal.problems.map((p) => p.code)).toEqual(["CONTROL_TOTAL_MISMATCH"]);
    expect(wrongTotal.problems[0]!.message).toContain("USD 125000.00");
    expect(wrongTotal.problems[0]!.message).toContain("USD 1500.50");
    const wrongRows = await validate(file, declaredTotalsOf(3, []));
    expect(wrongRows.problems.map((p) => p.code)).toEqual(["CONTROL_ROWS_MISMATCH"]);
    const otherCurrency = await validate(file, declaredTotalsOf(undefined, ["EUR:10.00"]));
    expect(otherCurrency.problems.map((p) => p.code)).toEqual(["CONTROL_TOTAL_MISMATCH"]);
  });

  it("are parsed strictly from CUR:amount", () => {
    expect(parseDeclaredTotal("usd:125000.00")).toEqual({ currency: "USD", minor: 12_500_000 });
    expect(parseDeclaredTotal("JPY:5000")).toEqual({ currency: "JPY", minor: 5000 });
    expect(() => parseDeclaredTotal("125000")).toThrow(/USD:125000.00/);
    expect(() => parseDeclaredTotal("XXQ:1")).toThrow(/ISO 4217/);
    expect(() => parseDeclaredTotal("USD:1.234")).toThrow();
    // Written as amounts are: thousands separators and either decimal mark when it is self-evident,
    // each currency's own decimals, and never a guess.
    expect(parseDeclaredTotal("USD:1,234.50")).toEqual({ currency: "USD", minor: 123_450 });
    expect(parseDeclaredTotal("EUR:1.234,50")).toEqual({ currency: "EUR", minor: 123_450 });
    expect(parseDeclaredTotal("EUR 1234,50")).toEqual({ currency: "EUR", minor: 123_450 });
    expect(parseDeclaredTotal("KWD:1,234.500")).toEqual({ currency: "KWD", minor: 1_234_500 });
    expect(parseDeclaredTotal("JPY:1234")).toEqual({ currency: "JPY", minor: 1234 });
    expect(() => parseDeclaredTotal("JPY:1234.5")).toThrow(/more decimals than JPY/);
    expect(() => parseDeclaredTotal("KWD:1,234")).toThrow(/either decimal mark.*KWD:1234\.000/);
    expect(() => declaredTotalsOf(undefined, ["USD:1", "usd:2"])).toThrow(/twice/);
  });
});
