import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_PREFERENCES } from "../../../src/payouts-api/wire-types.js";
import {
  AMOUNT_FORMAT,
  buildTemplate,
  COMMON_CURRENCIES,
  LAST_DATA_ROW,
  SHEETS,
  TEMPLATE_COLUMNS,
  TEMPLATE_HEADERS,
  TEXT_FORMAT,
  writeTemplate,
} from "../../../src/templates/index.js";

const CHECKED_IN = join(import.meta.dirname, "../../../templates");

interface ValidationModel {
  type?: string;
  formulae?: unknown[];
  errorStyle?: string;
}

/** Everything a user of the template sees, extracted from a workbook for comparison. */
function describeWorkbook(workbook: ExcelJS.Workbook) {
  return workbook.worksheets.map((sheet) => {
    const validations = (sheet as unknown as { dataValidations: { model: Record<string, ValidationModel> } })
      .dataValidations.model;
    const columns = [];
    for (let c = 1; c <= sheet.columnCount; c++) {
      const column = sheet.getColumn(c);
      const first = validations[`${column.letter}2`];
      columns.push({
        width: column.width,
        numFmt: column.style?.numFmt,
        validation: first && { type: first.type, formulae: first.formulae, errorStyle: first.errorStyle },
        lastRowValidated: validations[`${column.letter}${LAST_DATA_ROW}`] !== undefined,
        pastLastRowValidated: validations[`${column.letter}${LAST_DATA_ROW + 1}`] !== undefined,
      });
    }
    const values: unknown[] = [];
    sheet.eachRow((row) => {
      values.push(row.values);
    });
    return { name: sheet.name, state: sheet.state, views: sheet.views, columns, values };
  });
}

async function loadWorkbook(data: Buffer): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(data as unknown as ArrayBuffer);
  return workbook;
}

let checkedIn: ExcelJS.Workbook;
let dir: string;
beforeAll(async () => {
  checkedIn = await loadWorkbook(await readFile(join(CHECKED_IN, "payout-template.xlsx")));
  dir = await mkdtemp(join(tmpdir(), "payouts-template-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function sheet(name: string): ExcelJS.Worksheet {
  const found = checkedIn.getWorksheet(name);
  if (!found) throw new Error(`no ${name} sheet`);
  return found;
}

describe("checked-in templates", () => {
  it("the CSV template is exactly what buildTemplate('csv') produces: BOM and the header line", async () => {
    const onDisk = await readFile(join(CHECKED_IN, "payout-template.csv"));
    expect(onDisk.equals(await buildTemplate("csv"))).toBe(true);
    expect(onDisk.toString("utf8")).toBe(`\uFEFF${TEMPLATE_HEADERS.join(",")}\r\n`);
  });

  it("the XLSX template matches what buildTemplate('xlsx') describes (sheets, columns, validations, formats, help)", async () => {
    const fresh = await loadWorkbook(await buildTemplate("xlsx"));
    expect(describeWorkbook(checkedIn)).toEqual(describeWorkbook(fresh));
  });
});

describe("the XLSX template", () => {
  it("has the data sheet first, then Instructions, then a hidden Lists sheet", () => {
    expect(checkedIn.worksheets.map((s) => [s.name, s.state])).toEqual([
      [SHEETS.data, "visible"],
      [SHEETS.instructions, "visible"],
      [SHEETS.lists, "hidden"],
    ]);
  });

  it("has the design's columns with two example metadata columns, in a bold frozen header", () => {
    const data = sheet(SHEETS.data);
    expect(TEMPLATE_HEADERS).toEqual([
      "reference",
      "from_account",
      "to_account",
      "amount",
      "currency",
      "delivery",
      "payer_memo",
      "recipient_note",
      "purpose",
      "attachment",
      "metadata.cost_center",
      "metadata.invoice",
    ]);
    expect(data.getRow(1).values).toEqual([undefined, ...TEMPLATE_HEADERS]);
    expect(data.getCell("A1").font?.bold).toBe(true);
    expect(data.views[0]).toMatchObject({ state: "frozen", ySplit: 1 });
    expect(data.rowCount).toBe(1);
  });

  it("formats ids as text (leading zeros survive) and amounts with two decimals", () => {
    const data = sheet(SHEETS.data);
    for (const letter of ["A", "B", "C"]) expect(data.getColumn(letter).style?.numFmt).toBe(TEXT_FORMAT);
    expect(data.getColumn("D").style?.numFmt).toBe(AMOUNT_FORMAT);
  });

  it("offers the 13 delivery preferences as an inline dropdown over rows 2 to 5000", () => {
    const validations = (
      sheet(SHEETS.data) as unknown as { dataValidations: { find(a: string): ValidationModel } }
    ).dataValidations;
    const delivery = validations.find("F2");
    expect(delivery?.type).toBe("list");
    const formula = String(delivery?.formulae?.[0]);
    expect(formula.length).toBeLessThanOrEqual(255);
    expect(formula.replaceAll('"', "").split(",")).toEqual([...DELIVERY_PREFERENCES]);
    expect(delivery?.errorStyle ?? "stop").toBe("stop");
    expect(validations.find(`F${LAST_DATA_ROW}`)).toEqual(delivery);
    expect(validations.find(`F${LAST_DATA_ROW + 1}`)).toBeUndefined();
    expect(validations.find("F1")).toBeUndefined();
  });

  it("offers common currencies from the Lists sheet, allowing other codes with a warning", () => {
    const validations = (
      sheet(SHEETS.data) as unknown as { dataValidations: { find(a: string): ValidationModel } }
    ).dataValidations;
    const currency = validations.find("E2");
    expect(currency?.type).toBe("list");
    expect(currency?.errorStyle).toBe("warning");
    expect(currency?.formulae).toEqual([`${SHEETS.lists}!$A$2:$A$${COMMON_CURRENCIES.length + 1}`]);
    const lists = sheet(SHEETS.lists);
    const codes = lists.getColumn(1).values.slice(2);
    expect(codes).toEqual(COMMON_CURRENCIES.map((c) => c.code));
    expect(codes).toEqual(expect.arrayContaining(["USD", "EUR", "GBP", "JPY", "MXN"]));
  });

  it("explains every column and the amount, currency, delivery, metadata and reference rules", () => {
    const instructions = sheet(SHEETS.instructions);
    const text: string[] = [];
    instructions.eachRow((row) => {
      row.eachCell((cell) => {
        text.push(String(cell.value));
      });
    });
    const all = text.join("\n");
    for (const column of TEMPLATE_COLUMNS) expect(text).toContain(column.header);
    expect(all).toMatch(/major units/);
    expect(all).toMatch(/decimal comma/);
    expect(all).toMatch(/never guessed or rounded/);
    expect(all).toMatch(/Blank means USD/);
    expect(all).toMatch(/Blank means the standard speed of the payee's rail/);
    expect(all).toMatch(/metadata\.<key>/);
    expect(all).toMatch(/Rows are identified by their reference/);
    for (const pref of DELIVERY_PREFERENCES) expect(text).toContain(pref);
  });
});

describe("writeTemplate", () => {
  it("writes either format to the given path", async () => {
    const xlsx = join(dir, "mine.xlsx");
    const csv = join(dir, "mine.csv");
    await writeTemplate("xlsx", xlsx);
    await writeTemplate("csv", csv);
    const written = await loadWorkbook(await readFile(xlsx));
    expect(written.worksheets[0]?.getRow(1).values).toEqual([undefined, ...TEMPLATE_HEADERS]);
    expect(await readFile(csv, "utf8")).toBe(`\uFEFF${TEMPLATE_HEADERS.join(",")}\r\n`);
  });
});
