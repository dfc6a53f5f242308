import { readFile } from "node:fs/promises";
import { join } from "node:path";
import ExcelJS from "exceljs";
import Papa from "papaparse";
import { describe, expect, it } from "vitest";
import { CARD_SUPERSEDED, RAIL_PREFERENCES, STANDARD_PREFERENCE } from "../../../src/delivery/index.js";
import type { AccountType, DeliveryPreference } from "../../../src/payouts-api/wire-types.js";
import { SHEETS, TEMPLATE_HEADERS } from "../../../src/templates/index.js";

const SAMPLES = join(import.meta.dirname, "../../../samples");

/** The sandbox seed's accounts (fixed externalIds), with the currency each is paid in. */
const INTERNAL: Record<string, { type: AccountType; verified: boolean }> = {
  "ops-checking": { type: "ach", verified: true },
  "payroll-unverified": { type: "ach", verified: false },
  "corporate-card": { type: "card", verified: true },
};
const EXTERNAL: Record<string, { type: AccountType; currency: string }> = {
  "vendor-ach": { type: "ach", currency: "USD" },
  "vendor-ach-2": { type: "ach", currency: "USD" },
  "vendor-check": { type: "check", currency: "USD" },
  "vendor-wire": { type: "domestic-wire", currency: "USD" },
  "vendor-vcard": { type: "virtual-card", currency: "USD" },
  "payee-card": { type: "card", currency: "USD" },
  "supplier-eur": { type: "international-fx", currency: "EUR" },
  "supplier-gbp": { type: "international-fx", currency: "GBP" },
  "supplier-jpy": { type: "international-fx", currency: "JPY" },
  "supplier-mxn": { type: "international-fx", currency: "MXN" },
  "supplier-usd-intl": { type: "international-fx", currency: "USD" },
  "contractor-gusd": { type: "international-gusd", currency: "USD" },
};
const DECIMALS: Record<string, number> = { USD: 2, EUR: 2, GBP: 2, MXN: 2, JPY: 0 };

type Row = Record<string, string>;

async function csvRows(name: string): Promise<Row[]> {
  const text = await readFile(join(SAMPLES, name), "utf8");
  expect(text.startsWith("\uFEFF")).toBe(true);
  const parsed = Papa.parse<Row>(text.slice(1), { header: true, skipEmptyLines: true });
  expect(parsed.errors).toEqual([]);
  expect(parsed.meta.fields).toEqual([...TEMPLATE_HEADERS]);
  return parsed.data;
}

/** XLSX rows as the text a person sees, with numbers at Excel's 15 significant digits. */
async function xlsxRows(name: string): Promise<Row[]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(join(SAMPLES, name));
  const sheet = workbook.worksheets[0];
  expect(sheet?.name).toBe(SHEETS.data);
  const rows: Row[] = [];
  sheet?.eachRow((row, number) => {
    if (number === 1) return;
    const record: Row = {};
    TEMPLATE_HEADERS.forEach((header, i) => {
      record[header] = cellText(row.getCell(i + 1).value);
    });
    rows.push(record);
  });
  return rows;
}

function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return String(Number(value.toPrecision(15)));
  if (typeof value === "string") return value;
  if (typeof value === "object" && "formula" in value) return cellText(value.result as ExcelJS.CellValue);
  if (typeof value === "object" && "error" in value) return value.error;
  throw new Error(`unexpected cell value ${JSON.stringify(value)}`);
}

/** The amount in minor units, for rows meant to be valid. */
function minorUnits(row: Row): number {
  const currency = row.currency || "USD";
  const decimals = DECIMALS[currency] ?? 2;
  const [whole, fraction = ""] = (row.amount ?? "").split(".");
  expect(fraction.length).toBeLessThanOrEqual(decimals);
  return Number(whole) * 10 ** decimals + Number(fraction.padEnd(decimals, "0") || "0");
}

describe("samples/payouts-valid", () => {
  it("has the same rows in CSV and XLSX", async () => {
    const csv = await csvRows("payouts-valid.csv");
    const xlsx = await xlsxRows("payouts-valid.xlsx");
    expect(xlsx.map((r) => ({ ...r, amount: Number(r.amount) }))).toEqual(
      csv.map((r) => ({ ...r, amount: Number(r.amount) })),
    );
    expect(csv.length).toBeGreaterThanOrEqual(20);
  });

  it("pays every payee with a delivery of its rail, in its currency, from a verified payer", async () => {
    const rows = await csvRows("payouts-valid.csv");
    const references = new Set(rows.map((r) => r.reference));
    expect(references.size).toBe(rows.length);
    for (const row of rows) {
      expect(row.reference).toMatch(/^[A-Za-z0-9_-]+$/);
      const payer = INTERNAL[row.from_account ?? ""];
      const payee = EXTERNAL[row.to_account ?? ""];
      if (!payer || !payee) throw new Error(`row ${row.reference}: unknown account`);
      expect(payer.verified).toBe(true);
      expect(row.currency || "USD").toBe(payee.currency);
      const delivery = (row.delivery || STANDARD_PREFERENCE[payee.type]) as DeliveryPreference;
      expect(RAIL_PREFERENCES[payee.type]).toContain(delivery);
      if (payer.type === "card") {
        expect(CARD_SUPERSEDED[delivery]).toBeUndefined();
        expect(payee.type).not.toBe("virtual-card");
      }
      expect(minorUnits(row)).toBeGreaterThan(0);
    }
  });

  it("covers every delivery preference, blank delivery and currency, and card-funded payments", async () => {
    const rows = await csvRows("payouts-valid.csv");
    const used = new Set(rows.map((r) => r.delivery));
    for (const prefs of Object.values(RAIL_PREFERENCES)) for (const p of prefs) expect(used).toContain(p);
    expect(rows.filter((r) => r.delivery === "" && r.currency === "").length).toBeGreaterThanOrEqual(2);
    expect(rows.filter((r) => r.from_account === "corporate-card").map((r) => r.delivery)).toEqual(
      expect.arrayContaining(["same-day-ach", "instant-domestic-wire", "standard-check"]),
    );
    for (const header of ["metadata.cost_center", "metadata.invoice"]) {
      expect(rows.every((r) => (r[header] ?? "") !== "")).toBe(true);
    }
  });

  it("has exactly one row that the sandbox fails (minor units ending 13) and none it holds (77)", async () => {
    const rows = await csvRows("payouts-valid.csv");
    const endings = rows.map((r) => minorUnits(r) % 100);
    expect(endings.filter((e) => e === 13)).toHaveLength(1);
    expect(endings).not.toContain(77);
  });

  it("gives the MXN row a purpose and an attachment file that exists and is a PDF", async () => {
    const rows = await csvRows("payouts-valid.csv");
    const mxn = rows.find((r) => r.currency === "MXN");
    expect(mxn?.purpose).not.toBe("");
    const pdf = await readFile(join(SAMPLES, mxn?.attachment ?? "missing"));
    expect(pdf.subarray(0, 8).toString("latin1")).toBe("%PDF-1.4");
    expect(pdf.toString("latin1").trimEnd().endsWith("%%EOF")).toBe(true);
  });
});

describe("samples/payouts-mistakes", () => {
  it("has the same rows in CSV and XLSX, except that #REF! is an error cell in the XLSX", async () => {
    const csv = await csvRows("payouts-mistakes.csv");
    const xlsx = await xlsxRows("payouts-mistakes.xlsx");
    const normal = (r: Row) => ({
      ...r,
      amount: Number.isNaN(Number(r.amount)) ? r.amount : Number(r.amount),
    });
    expect(xlsx.map(normal)).toEqual(csv.map(normal));
    expect(csv.map((r) => r.amount)).toEqual(
      expect.arrayContaining(["1,234", "12.345", "10.5", "#REF!", ""]),
    );
  });
});
