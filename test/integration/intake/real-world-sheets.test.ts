/**
 * Sheets written the way Excel, LibreOffice and Google Sheets write them (raw bytes and raw OOXML, not
 * our own writer), validated against a real sandbox: each row gets the right verdict, the row number
 * the user sees in their spreadsheet (title rows and blank lines count) and the column as they
 * titled it.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawSheet, writeRawXlsx, xml } from "../../unit/sheets/ooxml.js";
import {
  makeTempDir,
  rowOf,
  type SandboxWithClient,
  type SheetOutcome,
  startSandboxWithClient,
  validateAll,
  writeText,
} from "./helpers.js";

let env: SandboxWithClient;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  env = await startSandboxWithClient();
  temp = await makeTempDir("payouts-real-sheets-");
});
afterAll(async () => {
  await env?.close();
  await temp?.remove();
});

/** [row, column, code] of each problem of a row. */
const problemsOf = (outcome: SheetOutcome, row: number) =>
  rowOf(outcome, row).problems.map((p) => [p.row, p.column, p.code]);

describe('Excel "CSV UTF-8" (BOM, CRLF, title rows, quoted values)', () => {
  let outcome: SheetOutcome;
  beforeAll(async () => {
    const lines = [
      "April payouts - Acme Corp,,,,,,", //                                     1 title
      "Prepared by J. Rivera,,,,,,", //                                         2 title
      ",,,,,,", //                                                              3 blank
      "Reference,From Account,To Account,Amount,Currency,Delivery,Memo", //    4 header
      "00123,ops-checking,vendor-ach,1250.00,USD,Standard ACH,April rent", //  5 valid, zeros kept
      'PAY-2,ops-checking,vendor-ach-2,"4,200.00",USD,,Office move', //        6 valid, thousands
      ",,,,,,", //                                                              7 blank
      "PAY-3,ops-checking,vendor-ach,12.345,USD,,Three decimals", //           8 too precise
      "PAY-4,ops-checking,vendor-check,100.00,USD,rtp,Wrong rail", //          9 rail mismatch
      'PAY-5,ops-checking,vendor-ach,75.00,USD,,"Line one\r\nLine two"', //    10 valid, two-line memo
      ",,,,,,", //                                                              trailing empty rows
      ",,,,,,",
    ];
    const file = await writeText(temp.dir, "excel-utf8.csv", `\uFEFF${lines.join("\r\n")}\r\n`);
    outcome = await validateAll(file, env.client);
  });

  it("finds the header below the title rows and reads only the data rows", () => {
    expect(outcome.header).toMatchObject({ headerRowNumber: 4, delimiter: ",", encoding: "utf-8-bom" });
    expect(outcome.sheetProblems).toEqual([]);
    expect([...outcome.rows.keys()]).toEqual([5, 6, 8, 9, 10]);
  });

  it("keeps a reference's leading zeros and reads a quoted thousands separator", () => {
    expect(rowOf(outcome, 5).instruction).toMatchObject({
      rowKey: "00123",
      reference: "00123",
      amount: 125000,
      deliveryPreference: "standard-ach",
      payerMemo: "April rent",
    });
    expect(rowOf(outcome, 6).instruction).toMatchObject({ amount: 420000, deliveryResolvedFromBlank: true });
  });

  it("names the row as the user sees it and the column as titled", () => {
    expect(problemsOf(outcome, 8)).toEqual([[8, "Amount", "AMOUNT_TOO_PRECISE"]]);
    expect(problemsOf(outcome, 9)).toEqual([[9, "Delivery", "DELIVERY_RAIL_MISMATCH"]]);
  });

  it("keeps a line break inside a quoted memo", () => {
    expect(rowOf(outcome, 10).instruction?.payerMemo).toBe("Line one\nLine two");
  });
});

describe("Excel XLSX (shared strings, a title row, formulas, numbers and error cells)", () => {
  let outcome: SheetOutcome;
  beforeAll(async () => {
    const strings: string[] = [];
    const s = (text: string): string => {
      strings.push(`<t xml:space="preserve">${xml(text)}</t>`);
      return `t="s"><v>${strings.length - 1}</v>`;
    };
    const cells = (row: number, values: Array<string | undefined>) =>
      `<row r="${row}">${values
        .map((v, i) => (v === undefined ? "" : `<c r="${String.fromCharCode(65 + i)}${row}" ${v}</c>`))
        .join("")}</row>`;
    strings.push("<r><t>vendor-</t></r><r><rPr><b/></rPr><t>ach-2</t></r>"); // rich text, as Excel keeps it
    const richPayee = `t="s"><v>${strings.length - 1}</v>`;
    const num = (value: string) => `><v>${value}</v>`;
    const readMe: RawSheet = { name: "Read me", rows: cells(1, [s("How to fill in the Payouts sheet")]) };
    const payouts: RawSheet = {
      name: "Payouts",
      rows: [
        cells(1, [s("April payouts")]),
        cells(2, [
          s("Reference"),
          s("From Account"),
          s("To Account"),
          s("Amount"),
          s("Currency"),
          s("Delivery"),
        ]),
        // =0.1+0.2, cached as Excel stores it: read at 15 significant digits, 0.30.
        cells(3, [
          s("XL-1"),
          s("ops-checking"),
          s("vendor-ach"),
          "><f>0.1+0.2</f><v>0.30000000000000004</v>",
          s("USD"),
        ]),
        // A 19-digit account id typed into a General cell: Excel kept only 15 digits.
        cells(4, [s("XL-2"), s("ops-checking"), num("1.2345678901234568E+18"), num("100"), s("USD")]),
        // A formula that lost its reference.
        cells(5, [s("XL-3"), s("ops-checking"), s("vendor-ach"), 't="e"><v>#REF!</v>', s("USD")]),
        // row 6 is blank: Excel writes no <row> for it
        // The amount of rows 7 and 8 is one merged cell, D7:D8.
        cells(7, [s("000123"), s("ops-checking"), s("vendor-ach"), num("1250"), s("USD"), s("same-day-ach")]),
        cells(8, [s("XL-5"), s("ops-checking"), s("vendor-ach-2"), undefined, s("USD")]),
        // A number stored as text, and a rich-text payee.
        cells(9, [s("XL-6"), s("ops-checking"), richPayee, s(" 99.50 "), s("USD")]),
      ].join(""),
      after: '<mergeCells count="2"><mergeCell ref="A1:F1"/><mergeCell ref="D7:D8"/></mergeCells>',
    };
    const file = path.join(temp.dir, "excel.xlsx");
    await writeRawXlsx(file, { sheets: [readMe, payouts], sharedStrings: strings });
    outcome = await validateAll(file, env.client);
  });

  it("reads the first sheet with our header, below its title row", () => {
    expect(outcome.header).toMatchObject({ sheetName: "Payouts", headerRowNumber: 2, format: "xlsx" });
    expect(outcome.sheetProblems).toEqual([]);
    expect([...outcome.rows.keys()]).toEqual([3, 4, 5, 7, 8, 9]);
  });

  it("takes =0.1+0.2 at Excel's 15 significant digits: 0.30, valid", () => {
    expect(problemsOf(outcome, 3)).toEqual([]);
    expect(rowOf(outcome, 3).instruction).toMatchObject({ amount: 30, currency: "USD" });
  });

  it("refuses a 19-digit account id stored as a number, saying its digits are lost", () => {
    expect(problemsOf(outcome, 4)).toEqual([[4, "To Account", "ID_PRECISION_LOST"]]);
    const message = rowOf(outcome, 4).problems[0]?.message;
    expect(message).toContain("cell C4");
    expect(message).toContain("Format the column as Text");
  });

  it("reports a #REF! cell as a cell error on its row and column", () => {
    expect(problemsOf(outcome, 5)).toEqual([[5, "Amount", "CELL_ERROR"]]);
    expect(rowOf(outcome, 5).problems[0]?.message).toContain("cell D5 shows the error #REF!");
  });

  it("never copies a merged amount into the rows below, and says the cell is merged", () => {
    expect(rowOf(outcome, 7).instruction).toMatchObject({ reference: "000123", amount: 125000 });
    expect(problemsOf(outcome, 8)).toEqual([[8, "Amount", "AMOUNT_MISSING"]]);
    expect(rowOf(outcome, 8).problems[0]?.message).toContain("merged range D7:D8");
  });

  it("reads a number stored as text and a rich-text cell", () => {
    expect(rowOf(outcome, 9).instruction).toMatchObject({
      amount: 9950,
      receivingAccountId: "acct_vendor_ach_2",
    });
  });
});

describe("LibreOffice CSV (LF, ; delimiter, decimal commas)", () => {
  let outcome: SheetOutcome;
  beforeAll(async () => {
    const lines = [
      "reference;from_account;to_account;amount;currency;delivery", // 1
      "LO-1;ops-checking;vendor-ach;1.234,56;USD;standard-ach", //    2
      "LO-2;ops-checking;supplier-eur;99,90;EUR;international-fx", // 3
      "", //                                                           4 blank line
      "LO-3;ops-checking;vendor-ach;1,234;USD;", //                    5 a decimal comma: 1.234 USD
      "LO-4;ops-checking;vendor-ach;1.234;USD;", //                    6 a thousands point: 1234
      "LO-5;ops-checking;vendor-ach;12,50 $;USD;", //                  7
    ];
    const file = await writeText(temp.dir, "libreoffice.csv", `${lines.join("\n")}\n`);
    outcome = await validateAll(file, env.client);
  });

  it("detects the ; delimiter and the decimal comma", () => {
    expect(outcome.header).toMatchObject({ delimiter: ";", amountConvention: "comma", headerRowNumber: 1 });
    expect([...outcome.rows.keys()]).toEqual([2, 3, 5, 6, 7]);
  });

  it("reads 1.234,56 as 123456 minor units and 99,90 EUR as 9990", () => {
    expect(rowOf(outcome, 2).instruction).toMatchObject({ amount: 123456, currency: "USD" });
    expect(rowOf(outcome, 3).instruction).toMatchObject({ amount: 9990, currency: "EUR" });
    expect(rowOf(outcome, 7).instruction?.amount).toBe(1250);
  });

  it("reads 1,234 by the sheet's decimal comma (too precise for USD) and 1.234 as 1234.00", () => {
    expect(problemsOf(outcome, 5)).toEqual([[5, "amount", "AMOUNT_TOO_PRECISE"]]);
    expect(rowOf(outcome, 6).instruction?.amount).toBe(123400);
  });
});

describe("Google Sheets CSV (LF, no BOM, formatted values)", () => {
  let outcome: SheetOutcome;
  beforeAll(async () => {
    const lines = [
      "Reference,From account,To account,Amount,Currency,Delivery", // 1
      'GS-1,ops-checking,vendor-ach,"$1,250.00",USD,Same-day ACH', //  2
      'GS-2,ops-checking,supplier-jpy,"150,000",JPY,', //               3
      "GS-3,ops-checking,vendor-wire,1250,USD,wire", //                 4
      ",,,,,", //                                                       5 blank
      "GS-4,ops-checking,vendor-ach,,USD,", //                          6 blank amount
      "GS-5,ops-checking,vendor-ach,1250.5,USD,", //                    7
      "GS-6,ops-checking,vendor-ach,10.00,usd,rtp", //                  8
    ];
    // Google Sheets ends the file without a final newline.
    const file = await writeText(temp.dir, "google-sheets.csv", lines.join("\n"));
    outcome = await validateAll(file, env.client);
  });

  it("reads every row with its number and verdict", () => {
    expect(outcome.header).toMatchObject({ delimiter: ",", encoding: "utf-8", amountConvention: "dot" });
    expect([...outcome.rows.keys()]).toEqual([2, 3, 4, 6, 7, 8]);
    expect(rowOf(outcome, 2).instruction).toMatchObject({
      amount: 125000,
      deliveryPreference: "same-day-ach",
    });
    expect(rowOf(outcome, 3).instruction).toMatchObject({ amount: 150000, currency: "JPY" });
    expect(rowOf(outcome, 4).instruction).toMatchObject({
      amount: 125000,
      deliveryPreference: "domestic-wire",
    });
    expect(problemsOf(outcome, 6)).toEqual([[6, "Amount", "AMOUNT_MISSING"]]);
    expect(rowOf(outcome, 7).instruction?.amount).toBe(125050);
    expect(rowOf(outcome, 8).instruction).toMatchObject({
      amount: 1000,
      currency: "USD",
      deliveryPreference: "rtp",
    });
  });
});

describe("an ERP export whose decimal mark cannot be told", () => {
  it("refuses 1,234 and 5,000 as ambiguous rather than guess, and reads 250", async () => {
    const file = await writeText(
      temp.dir,
      "erp.csv",
      'to_account,from_account,amount\nvendor-ach,ops-checking,"1,234"\nvendor-ach,ops-checking,"5,000"\nvendor-ach,ops-checking,250\n',
    );
    const outcome = await validateAll(file, env.client);
    expect(outcome.header.amountConvention).toBe("unknown");
    expect(problemsOf(outcome, 2)).toEqual([[2, "amount", "AMOUNT_AMBIGUOUS"]]);
    expect(problemsOf(outcome, 3)).toEqual([[3, "amount", "AMOUNT_AMBIGUOUS"]]);
    expect(rowOf(outcome, 4).instruction).toMatchObject({ amount: 25000, rowKey: "#4" });
  });
});

describe("a hand-typed CSV with an unquoted thousands comma", () => {
  it("refuses the row instead of paying 1.00 for 1,250.00", async () => {
    const file = await writeText(
      temp.dir,
      "unquoted-comma.csv",
      "reference,from_account,to_account,amount,payer_memo\nr1,ops-checking,vendor-ach,1,250.00,Invoice 7\nr2,ops-checking,vendor-ach,80.00,Invoice 8\n",
    );
    const outcome = await validateAll(file, env.client);
    const r1 = rowOf(outcome, 2);
    expect(r1.instruction).toBeUndefined();
    expect(r1.problems.map((p) => [p.row, p.column, p.code])).toEqual([[2, "column F", "UNHEADED_CELL"]]);
    expect(r1.problems[0]?.message).toContain('"Invoice 7"');
    expect(rowOf(outcome, 3).instruction).toMatchObject({ amount: 8000 });
  });
});
