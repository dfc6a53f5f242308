import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csvRecords } from "../../../src/sheets/csv/index.js";
import {
  type OpenSheetOptions,
  openSheet,
  SheetReadError,
  type SheetRow,
} from "../../../src/sheets/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "payouts-csv-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let fileCount = 0;
async function csvFile(content: string | Buffer, name = `sheet-${++fileCount}.csv`): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function readAll(path: string, options: OpenSheetOptions = {}) {
  const opened = await openSheet(path, options);
  const rows: SheetRow[] = [];
  for await (const row of opened.rows) rows.push(row);
  return { header: opened.header, rows };
}

async function readError(path: string): Promise<SheetReadError> {
  try {
    await readAll(path);
  } catch (error) {
    if (error instanceof SheetReadError) return error;
    throw error;
  }
  throw new Error("expected a SheetReadError");
}

const texts = (rows: SheetRow[], key: string) => rows.map((r) => r.cells[key]?.text);

describe("CSV files as tools write them", () => {
  it('reads Excel "CSV UTF-8": BOM, CRLF, a title row and a cell with a line break', async () => {
    const content =
      "\uFEFFPayouts for March,,,\r\n" +
      ",,,\r\n" +
      "Reference,To Account,Amount,Note\r\n" +
      'inv-1,00042,"1,250.00","Thanks for\nMarch"\r\n' +
      "inv-2,acct_2,99.5,Müller €\r\n" +
      ",,,\r\n" +
      ",,,\r\n";
    const { header, rows } = await readAll(await csvFile(content));
    expect(header).toMatchObject({
      format: "csv",
      encoding: "utf-8-bom",
      delimiter: ",",
      headerRowNumber: 3,
    });
    expect(header.amountConvention).toBe("dot");
    expect(rows.map((r) => r.rowNumber)).toEqual([4, 5]); // Excel shows the two-line record as one row
    expect(texts(rows, "to_account")).toEqual(["00042", "acct_2"]);
    expect(texts(rows, "recipient_note")).toEqual(["Thanks for\nMarch", "Müller €"]);
  });

  it('reads Excel plain "CSV" in windows-1252', async () => {
    const content = Buffer.concat([
      Buffer.from("to_account,amount,note\r\nacct_1,10.00,", "latin1"),
      Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x20, 0x80]), // "Müller €" in windows-1252
      Buffer.from("\r\n", "latin1"),
    ]);
    const { header, rows } = await readAll(await csvFile(content));
    expect(header.encoding).toBe("windows-1252");
    expect(texts(rows, "recipient_note")).toEqual(["Müller €"]);
  });

  it("honours Excel's sep=; line, skips it, and reads decimal commas", async () => {
    const content = "sep=;\r\nto_account;amount;currency\r\nacct_1;1.234,56;EUR\r\nacct_2;12,5;EUR\r\n";
    const { header, rows } = await readAll(await csvFile(content));
    // Excel hides the sep= line, so the header is row 1 on screen and the rows are 2 and 3.
    expect(header).toMatchObject({ delimiter: ";", amountConvention: "comma", headerRowNumber: 1 });
    expect(rows.map((r) => [r.rowNumber, r.cells.amount?.text])).toEqual([
      [2, "1.234,56"],
      [3, "12,5"],
    ]);
  });

  it("reads LibreOffice and Google Sheets exports (LF, no BOM, quotes only where needed)", async () => {
    const content = 'reference,to_account,amount,description\nr1,acct_1,5,"a, b"\nr2,acct_2,6,"say ""hi"""\n';
    const { header, rows } = await readAll(await csvFile(content));
    expect(header.encoding).toBe("utf-8");
    expect(texts(rows, "recipient_note")).toEqual(["a, b", 'say "hi"']);
    expect(rows.map((r) => r.rowNumber)).toEqual([2, 3]);
  });

  it("reads an ERP export with a title block, semicolons and trailing empty rows", async () => {
    const content =
      "ACME GmbH;;;\n" +
      "Zahlungsexport 2026-03;;;\n" +
      ";;;\n" +
      "Ref;Payee Account;Payout Amount;CCY;Meta:Kostenstelle\n" +
      "A-1;DE-77;1.234,56;EUR;K1\n" +
      "A-2;DE-78;99,00;EUR;K2\n" +
      ";;;;\n;;;;\n";
    const { header, rows } = await readAll(await csvFile(content));
    expect(header).toMatchObject({ delimiter: ";", headerRowNumber: 4, amountConvention: "comma" });
    expect(header.columns.map((c) => c.canonical)).toEqual([
      "reference",
      "to_account",
      "amount",
      "currency",
      "metadata.Kostenstelle",
    ]);
    expect(rows.map((r) => r.rowNumber)).toEqual([5, 6]);
  });

  it("keeps text exactly as written: leading zeros, scientific-looking ids, spaces", async () => {
    const content = "to_account,amount,purpose\n000123,1e5, x \n";
    const { rows } = await readAll(await csvFile(content));
    expect(rows[0]?.cells).toEqual({
      to_account: { kind: "string", text: "000123" },
      amount: { kind: "string", text: "1e5" },
      purpose: { kind: "string", text: " x " },
    });
  });

  it("reads UTF-16 files with a byte-order mark (Excel's Unicode Text, tab-delimited)", async () => {
    const text = "to_account\tamount\r\nacct_é\t5\r\n";
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const be = Buffer.from(le.subarray(2)).swap16();
    for (const [bytes, encoding] of [
      [le, "utf-16le"],
      [Buffer.concat([Buffer.from([0xfe, 0xff]), be]), "utf-16be"],
    ] as const) {
      const { header, rows } = await readAll(await csvFile(bytes));
      expect(header).toMatchObject({ encoding, delimiter: "\t" });
      expect(texts(rows, "to_account")).toEqual(["acct_é"]);
    }
  });

  it("reads classic Mac line endings (CR only) with the right row numbers", async () => {
    const { rows } = await readAll(await csvFile("to_account,amount\r\racct_1,5\racct_2,6\r"));
    expect(rows.map((r) => r.rowNumber)).toEqual([3, 4]);
  });

  it("reads a file whose line endings are mixed (CRLF, CR, LF, CR before CRLF)", async () => {
    const { rows } = await readAll(await csvFile("to_account,amount\r\r\nacct_1,5\racct_2,6\nacct_3,7\r\n"));
    expect(rows.map((r) => [r.rowNumber, r.cells.to_account?.text])).toEqual([
      [3, "acct_1"],
      [4, "acct_2"],
      [5, "acct_3"],
    ]);
  });

  it("keeps characters split across read chunks intact", async () => {
    const header = "to_account,amount,note\n";
    // Place a 3-byte "€" and a 2-byte "é" across the 64 KiB chunk boundary of the file reader.
    for (const [char, offset] of [
      ["€", 1],
      ["€", 2],
      ["é", 1],
    ] as const) {
      const fillerLength = 65536 - offset - Buffer.byteLength(header) - "acct_1,5,".length;
      const note = `${"x".repeat(fillerLength)}${char}${char}`;
      // The note is longer than a cell may be by default (Excel's 32,767 characters): allowed here so
      // that the chunk boundary falls inside one cell.
      const { rows } = await readAll(await csvFile(`${header}acct_1,5,${note}\nacct_2,6,${char}\n`), {
        limits: { maxCellChars: 70_000 },
      });
      expect(texts(rows, "recipient_note")).toEqual([note, char]);
    }
  });

  it("marks a sheet with decimal commas and decimal points as mixed", async () => {
    const content = 'to_account,amount\na,"1,234.56"\nb,"12,5"\n';
    expect((await readAll(await csvFile(content))).header.amountConvention).toBe("mixed");
  });

  it("numbers every row of a long sheet as a spreadsheet shows it, across read chunks", async () => {
    // Blank lines and cells with line breaks every so often, over several 64 KiB read chunks.
    const lines = ["Payout run", "reference,to_account,amount,note"];
    const expected: Array<[number, string, string]> = [];
    for (let i = 1; i <= 4000; i++) {
      if (i % 97 === 0) lines.push("");
      const note = i % 13 === 0 ? `"line one\nline ""two"""` : `note ${i}`;
      lines.push(`R-${i},payee-${i},${i}.50,${note}`);
      expected.push([lines.length, `R-${i}`, i % 13 === 0 ? 'line one\nline "two"' : `note ${i}`]);
    }
    const { header, rows } = await readAll(await csvFile(`${lines.join("\r\n")}\r\n`));
    expect(header.headerRowNumber).toBe(2);
    expect(header.amountConvention).toBe("dot");
    expect(rows.map((r) => [r.rowNumber, r.cells.reference?.text, r.cells.recipient_note?.text])).toEqual(
      expected,
    );
  });

  it("stops reading when the reader stops early", async () => {
    const path = await csvFile(`to_account,amount\n${"acct_1,5\n".repeat(20000)}`);
    const opened = await openSheet(path);
    let seen = 0;
    for await (const row of opened.rows) {
      expect(row.rowNumber).toBe(2);
      seen++;
      break;
    }
    expect(seen).toBe(1);
    // Nothing is left pending: the same file reads in full afterwards.
    expect((await readAll(path)).rows).toHaveLength(20000);
  });

  it("keeps non-empty cells beyond the header as unheaded, by column letter", async () => {
    const { rows } = await readAll(await csvFile("to_account,amount\na,1,,late\n"));
    expect(rows[0]?.unheaded).toEqual({ D: { kind: "string", text: "late" } });
  });
});

describe("CSV files that cannot be read", () => {
  it("refuses bytes that are neither UTF-8 nor windows-1252, with advice", async () => {
    const path = await csvFile(
      Buffer.from([...Buffer.from("to_account,amount\na,1\n"), 0xc3, 0x28, 0x81, 0x0a]),
    );
    const error = await readError(path);
    expect(error.code).toBe("ENCODING_UNSUPPORTED");
    expect(error.message).toContain("CSV UTF-8");
    expect(error.message).toContain("line 3");
  });

  it("refuses UTF-16 without a byte-order mark", async () => {
    const error = await readError(await csvFile(Buffer.from("to_account,amount\n", "utf16le")));
    expect(error.code).toBe("ENCODING_UNSUPPORTED");
  });

  it("refuses a quote that never closes, naming the line, instead of swallowing rows", async () => {
    const error = await readError(await csvFile('to_account,amount,note\na,1,ok\nb,2,"broken\nc,3,x\n'));
    expect(error.code).toBe("FILE_CORRUPT");
    expect(error.message).toContain("line 3");
  });

  it("refuses empty files", async () => {
    expect((await readError(await csvFile(""))).code).toBe("EMPTY_FILE");
    expect((await readError(await csvFile("\uFEFF\r\n \r\n"))).code).toBe("EMPTY_FILE");
  });

  it("refuses a file whose header is not within the first 20 rows", async () => {
    const content = `${"title\n".repeat(20)}to_account,amount\na,1\n`;
    const error = await readError(await csvFile(content, "late-header.csv"));
    expect(error.code).toBe("HEADER_NOT_FOUND");
    expect(error.message).toMatch(/^late-header\.csv: /);
  });

  it("refuses a missing file and unsupported extensions", async () => {
    expect((await readError(join(dir, "nope.csv"))).code).toBe("FILE_NOT_FOUND");
    expect((await readError(await csvFile("%PDF-1.7", "sheet.pdf"))).code).toBe("UNSUPPORTED_FORMAT");
  });
});

describe("csvRecords", () => {
  it("gives the same records and start lines wherever the text is split into chunks", async () => {
    const text = 'a,b\n"multi\nline",x\n\n"q ""x""",y\nlast,z';
    const collect = async (chunks: string[]) => {
      async function* source() {
        yield* chunks;
      }
      const out: Array<[number, string[]]> = [];
      for await (const record of csvRecords(source(), ",")) out.push([record.line, record.fields]);
      return out;
    };
    const whole = await collect([text]);
    expect(whole).toEqual([
      [1, ["a", "b"]],
      [2, ["multi\nline", "x"]],
      [4, [""]],
      [5, ['q "x"', "y"]],
      [6, ["last", "z"]],
    ]);
    for (let i = 1; i < text.length; i++) {
      for (let j = i + 1; j <= text.length; j += 3) {
        expect(
          await collect([text.slice(0, i), text.slice(i, j), text.slice(j)]),
          `split at ${i},${j}`,
        ).toEqual(whole);
      }
    }
  });
});
