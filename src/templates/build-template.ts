/**
 * Renders the template description (template-spec.ts) as an XLSX workbook or a CSV header line.
 * The XLSX uses exceljs's regular (in-memory) Workbook: the template is small, and the streaming
 * writer is not needed for it.
 */
import type * as ExcelJS from "exceljs";
import { writeFileAtomic } from "../files/atomic-write.js";
import { csvRecord, UTF8_BOM } from "../files/csv-encode.js";
import { loadExcel } from "../files/load-excel.js";
import {
  COMMON_CURRENCIES,
  type ColumnValidation,
  CURRENCY_LIST_RANGE,
  DELIVERY_LIST_FORMULA,
  deliveryTable,
  FIRST_DATA_ROW,
  INLINE_LIST_MAX,
  INSTRUCTION_NOTES,
  LAST_DATA_ROW,
  SHEETS,
  TEMPLATE_COLUMNS,
  TEMPLATE_HEADERS,
  type TemplateFormat,
} from "./template-spec.js";

/** exceljs implements `worksheet.dataValidations` but its typings leave it out. */
interface WithDataValidations {
  dataValidations: { add(range: string, validation: ExcelJS.DataValidation): void };
}

/** A fixed timestamp keeps the regenerated template free of spurious differences. */
const TEMPLATE_TIMESTAMP = new Date("2024-01-01T00:00:00Z");
const HEADER_FILL: ExcelJS.Fill = { type: "pattern", pattern: "solid", fgColor: { argb: "FFDDEBF7" } };

export function templateFileName(format: TemplateFormat): string {
  return `payout-template.${format}`;
}

/** The template as file bytes. */
export async function buildTemplate(format: TemplateFormat): Promise<Buffer> {
  if (format === "csv") return Buffer.from(UTF8_BOM + csvRecord(TEMPLATE_HEADERS), "utf8");
  const workbook = await buildTemplateWorkbook();
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/** Writes the template to `outPath` atomically (backs `payouts template [--format] [-o]`). */
export async function writeTemplate(format: TemplateFormat, outPath: string): Promise<void> {
  await writeFileAtomic(outPath, await buildTemplate(format));
}

/**
 * The template workbook, in memory: the Payouts data sheet (first, so sheet readers that take the
 * first worksheet read the payouts), the Instructions sheet, and the hidden Lists sheet that feeds
 * the currency dropdown. The sample sheets are this workbook with rows filled in.
 */
export async function buildTemplateWorkbook(): Promise<ExcelJS.Workbook> {
  if (DELIVERY_LIST_FORMULA.length > INLINE_LIST_MAX) {
    // Cannot happen with today's 13 values; guards a future addition from producing a broken file.
    throw new Error("the delivery list no longer fits an inline dropdown: move it to the Lists sheet");
  }
  const { Workbook } = await loadExcel();
  const workbook = new Workbook();
  workbook.creator = "payouts";
  workbook.created = TEMPLATE_TIMESTAMP;
  workbook.modified = TEMPLATE_TIMESTAMP;
  addDataSheet(workbook);
  addInstructionsSheet(workbook);
  addListsSheet(workbook);
  return workbook;
}

function addDataSheet(workbook: ExcelJS.Workbook): void {
  const sheet = workbook.addWorksheet(SHEETS.data, { views: [{ state: "frozen", xSplit: 0, ySplit: 1 }] });
  sheet.columns = TEMPLATE_COLUMNS.map((column) => ({
    width: column.width,
    // Column styles apply to the cells a user types into, so ids keep their leading zeros.
    ...(column.numFmt === undefined ? {} : { style: { numFmt: column.numFmt } }),
  }));
  const header = sheet.getRow(1);
  header.values = [...TEMPLATE_HEADERS];
  header.eachCell((cell) => {
    cell.font = { bold: true };
    cell.fill = HEADER_FILL;
    // The header itself is plain text whatever the column's format.
    cell.numFmt = "@";
  });

  const validations = (sheet as unknown as WithDataValidations).dataValidations;
  TEMPLATE_COLUMNS.forEach((column, index) => {
    if (column.validation === undefined) return;
    const letter = sheet.getColumn(index + 1).letter;
    const range = `${letter}${FIRST_DATA_ROW}:${letter}${LAST_DATA_ROW}`;
    validations.add(range, dataValidationFor(column.validation));
  });
}

/** The Excel data validation of each kind of column. */
export function dataValidationFor(validation: ColumnValidation): ExcelJS.DataValidation {
  switch (validation.kind) {
    case "delivery":
      return {
        type: "list",
        allowBlank: true,
        formulae: [DELIVERY_LIST_FORMULA],
        showErrorMessage: true,
        errorStyle: "stop",
        errorTitle: "Unknown delivery option",
        error: "Pick a delivery option from the list, or leave blank for the payee's standard speed.",
      };
    case "currency":
      return {
        type: "list",
        allowBlank: true,
        formulae: [CURRENCY_LIST_RANGE],
        showErrorMessage: true,
        // A warning, not a stop: any ISO 4217 code the payee's account uses is valid.
        errorStyle: "warning",
        errorTitle: "Currency not in the list",
        error: "Not a common currency code. Keep it only if it is the payee account's ISO 4217 currency.",
      };
    case "positive-amount":
      return {
        type: "decimal",
        operator: "greaterThan",
        allowBlank: true,
        formulae: [0],
        showErrorMessage: true,
        // A warning: typed text such as 1250,50 is still accepted and checked by payouts itself.
        errorStyle: "warning",
        errorTitle: "Amount",
        error: "Amounts are positive numbers in major units of the currency (1250.00, JPY 5000).",
      };
    case "max-length":
      return {
        type: "textLength",
        operator: "lessThanOrEqual",
        allowBlank: true,
        formulae: [validation.max],
        showErrorMessage: true,
        errorStyle: "stop",
        errorTitle: "Too long",
        error: `At most ${validation.max} characters.`,
      };
  }
}

function addInstructionsSheet(workbook: ExcelJS.Workbook): void {
  const sheet = workbook.addWorksheet(SHEETS.instructions);
  sheet.columns = [{ width: 24 }, { width: 26 }, { width: 100 }, { width: 34 }];
  const wrap: Partial<ExcelJS.Alignment> = { wrapText: true, vertical: "top" };
  const heading = (text: string) => {
    const row = sheet.addRow([text]);
    row.font = { bold: true, size: 13 };
  };
  const tableHeader = (values: string[]) => {
    const row = sheet.addRow(values);
    row.font = { bold: true };
    row.eachCell((cell) => {
      cell.fill = HEADER_FILL;
    });
  };

  const title = sheet.addRow(["How to fill the payout sheet"]);
  title.font = { bold: true, size: 16 };
  sheet.addRow([
    `Fill one row per payout on the ${SHEETS.data} sheet. Blank optional cells take the defaults below.`,
  ]);
  sheet.addRow([]);

  heading("Columns");
  tableHeader(["column", "required", "what to enter", "example"]);
  for (const column of TEMPLATE_COLUMNS) {
    const row = sheet.addRow([
      column.header,
      column.required ? "required" : "optional",
      column.meaning,
      column.example,
    ]);
    row.alignment = wrap;
    // Examples are shown as typed, never reinterpreted as numbers or dates.
    row.getCell(4).numFmt = "@";
  }
  sheet.addRow([]);

  heading("Rules");
  for (const note of INSTRUCTION_NOTES) {
    const row = sheet.addRow([note.topic, "", note.text]);
    row.alignment = wrap;
    row.getCell(1).font = { bold: true };
  }
  sheet.addRow([]);

  heading("Delivery options");
  tableHeader(["delivery", "payee account type", "speed"]);
  for (const entry of deliveryTable()) sheet.addRow([entry.delivery, entry.rail, entry.speed]);
}

function addListsSheet(workbook: ExcelJS.Workbook): void {
  // Hidden: it only feeds the currency dropdown; the Instructions sheet is the readable help.
  const sheet = workbook.addWorksheet(SHEETS.lists, { state: "hidden" });
  sheet.columns = [{ width: 10 }, { width: 24 }, { width: 10 }];
  const header = sheet.addRow(["currency", "name", "decimals"]);
  header.font = { bold: true };
  for (const currency of COMMON_CURRENCIES) sheet.addRow([currency.code, currency.name, currency.decimals]);
}
