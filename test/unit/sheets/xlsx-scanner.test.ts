/**
 * The XLSX part scanners on their own: worksheet XML and shared strings, fed in chunks that split the
 * XML anywhere (zlib hands out pieces that end mid-tag, mid-entity, mid-character), written the way
 * Excel, LibreOffice, Google Sheets and .NET generators write them.
 */
import { describe, expect, it } from "vitest";
import { SharedStringsParser } from "../../../src/sheets/xlsx/shared-strings.js";
import { type RawRow, WorksheetScanner } from "../../../src/sheets/xlsx/worksheet-scanner.js";
import { xmlText } from "../../../src/sheets/xlsx/xml-text.js";

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';

function scanWhole(xml: string, onlyColumn = -1): { rows: RawRow[]; merges: string[] } {
  const scanner = new WorksheetScanner();
  scanner.onlyColumn = onlyColumn;
  const rows = [...scanner.feed(xml), ...scanner.end()];
  return { rows, merges: [...scanner.merges] };
}

function scanPieces(pieces: string[], onlyColumn = -1): { rows: RawRow[]; merges: string[] } {
  const scanner = new WorksheetScanner();
  scanner.onlyColumn = onlyColumn;
  const rows: RawRow[] = [];
  for (const piece of pieces) rows.push(...scanner.feed(piece));
  rows.push(...scanner.end());
  return { rows, merges: [...scanner.merges] };
}

function sharedStrings(pieces: string[]): Array<string | undefined> {
  const parser = new SharedStringsParser();
  for (const piece of pieces) parser.feed(piece);
  const table = parser.end();
  return Array.from({ length: table.count }, (_, i) => table.get(i));
}

/** A worksheet with every construct the scanner must get right, as various writers produce them. */
const TRICKY_SHEET =
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n` +
  `<worksheet ${NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
  '<dimension ref="A1:D6"/><sheetViews><sheetView workbookViewId="0"/></sheetViews>' +
  '<cols><col min="1" max="4" width="12" customWidth="1"/></cols>' +
  "<sheetData>" +
  '<row r="1" spans="1:4" x14ac:dyDescent="0.25"><c r="A1" t="s"><v>0</v></c><c r="B1" s="2" t="s"><v>1</v></c></row>' +
  // Entities, a character reference beyond the BMP, and text kept with its spaces (xml:space).
  '<row r="2"><c r="A2" t="inlineStr"><is><t xml:space="preserve">  Smith &amp; Sons &lt;ltd&gt; &#x1F600; &#233;  </t></is></c>' +
  '<c r="B2" s="1"><v>46082</v></c><c r="C2" t="str"><f>A2&amp;"x"</f><v>a&quot;b&apos;c</v></c></row>' +
  // Rich text runs in an inline string, phonetic guide left out; a comment and a CDATA section.
  '<row r="3"><c r="A3" t="inlineStr"><is><r><rPr><b/><color rgb="FF0000"/></rPr>' +
  '<t>acct_</t></r><r><t><![CDATA[1<c r="Z3"><v>2</v></c>]]></t></r><rPh sb="0" eb="1"><t>ヤ</t></rPh></is></c>' +
  '<!-- a comment <c r="Z3"><v>9</v></c> -->' +
  '<c r="B3" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="C3"><f t="shared" si="0"/><v>3</v></c><c r="D3" s="4"/></row>' +
  // Self-closing row, then attributes in single quotes, spaces around "=", and a ">" inside a value.
  '<row r="4"/>' +
  '<row r=\'5\' ht="15" x14ac:note="a>b"><c t=\'b\' r=\'B5\'><v>1</v></c><c r = "C5" t = "n"><v>-0.5</v></c></row>' +
  // A formula nobody calculated, and an empty <v/>.
  '<row r="6"><c r="A6"><f>SUM(B1:B2)</f></c><c r="B6" t="str"><v/></c></row>' +
  "</sheetData>" +
  '<mergeCells count="2"><mergeCell ref="A1:B1"/><mergeCell ref="C5:C6"/></mergeCells>' +
  '<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>' +
  "</worksheet>";

const TRICKY_ROWS: RawRow[] = [
  {
    number: 1,
    cells: [
      { column: 0, type: "s", style: 0, value: "0", formula: false },
      { column: 1, type: "s", style: 2, value: "1", formula: false },
    ],
  },
  {
    number: 2,
    cells: [
      { column: 0, type: "inlineStr", style: 0, value: "  Smith & Sons <ltd> 😀 é  ", formula: false },
      { column: 1, type: "", style: 1, value: "46082", formula: false },
      { column: 2, type: "str", style: 0, value: "a\"b'c", formula: true },
    ],
  },
  {
    number: 3,
    cells: [
      { column: 0, type: "inlineStr", style: 0, value: 'acct_1<c r="Z3"><v>2</v></c>', formula: false },
      { column: 1, type: "e", style: 0, value: "#DIV/0!", formula: true },
      { column: 2, type: "", style: 0, value: "3", formula: true },
    ],
  },
  { number: 4, cells: [] },
  {
    number: 5,
    cells: [
      { column: 1, type: "b", style: 0, value: "1", formula: false },
      { column: 2, type: "n", style: 0, value: "-0.5", formula: false },
    ],
  },
  {
    number: 6,
    cells: [
      { column: 0, type: "", style: 0, value: undefined, formula: true },
      { column: 1, type: "str", style: 0, value: "", formula: false },
    ],
  },
];

describe("xmlText", () => {
  it("decodes the five entities and character references, keeping what is not a reference", () => {
    expect(xmlText("a &lt;b&gt; &amp;amp; &quot;q&quot; &apos;s&apos;")).toBe("a <b> &amp; \"q\" 's'");
    expect(xmlText("&#65;&#x42;&#x1F4B6;")).toBe("AB💶");
    expect(xmlText("&nbsp; &#0; &#xD800; & alone")).toBe("&nbsp; &#0; &#xD800; & alone");
  });

  it("normalises line ends as an XML parser does, but keeps an escaped carriage return", () => {
    expect(xmlText("one\r\ntwo\rthree\nfour")).toBe("one\ntwo\nthree\nfour");
    expect(xmlText("one&#13;&#10;two")).toBe("one\r\ntwo");
  });
});

describe("WorksheetScanner", () => {
  it("reads rows, cells, values, formulas and merges as Excel and other writers write them", () => {
    const { rows, merges } = scanWhole(TRICKY_SHEET);
    expect(rows).toEqual(TRICKY_ROWS);
    expect(merges).toEqual(["A1:B1", "C5:C6"]);
  });

  it("gives the same result however the XML is split into chunks, even one character at a time", () => {
    const whole = scanWhole(TRICKY_SHEET);
    for (let at = 0; at <= TRICKY_SHEET.length; at++) {
      const split = scanPieces([TRICKY_SHEET.slice(0, at), TRICKY_SHEET.slice(at)]);
      expect(split, `split at ${at}`).toEqual(whole);
    }
    expect(scanPieces([...TRICKY_SHEET])).toEqual(whole);
  });

  it("reads a one-column pass exactly like the same column of a full pass", () => {
    for (const column of [0, 1, 2, 3, 25]) {
      const full = scanWhole(TRICKY_SHEET).rows.map((row) => ({
        number: row.number,
        cells: row.cells.filter((cell) => cell.column === column),
      }));
      expect(scanWhole(TRICKY_SHEET, column).rows).toEqual(full);
      expect(scanPieces([...TRICKY_SHEET], column).rows).toEqual(full);
    }
  });

  it("reads a one-column pass over a plain Excel sheet exactly like the same column of a full pass", () => {
    // No comments, every cell with its reference first: the pass searches for its column's cells.
    // Column D next to DA and DB (same first letter), rows without D, a self-closing D, shared strings,
    // inline strings and formulas in D.
    let xml = `<worksheet ${NS}><sheetData>`;
    for (let r = 1; r <= 60; r++) {
      const d =
        r % 5 === 0
          ? ""
          : r % 7 === 0
            ? `<c r="D${r}" s="1"/>`
            : r % 3 === 0
              ? `<c r="D${r}" t="inlineStr"><is><t>1.234,${r}</t></is></c>`
              : r % 4 === 0
                ? `<c r="D${r}" t="str"><f>"x"</f><v>${r},5</v></c>`
                : `<c r="D${r}" t="s"><v>${r}</v></c>`;
      xml +=
        `<row r="${r}" spans="1:106"><c r="A${r}" t="s"><v>0</v></c><c r="C${r}"><v>${r}.5</v></c>${d}` +
        `<c r="DA${r}" t="s"><v>${r + 1}</v></c><c r="DB${r}"><v>1</v></c></row>`;
    }
    xml += '</sheetData><mergeCells count="1"><mergeCell ref="D2:D3"/></mergeCells></worksheet>';
    const full = scanWhole(xml);
    for (const column of [0, 2, 3, 104, 105]) {
      const expected = full.rows.map((row) => ({
        number: row.number,
        cells: row.cells.filter((cell) => cell.column === column),
      }));
      expect(scanWhole(xml, column).rows, `column ${column}`).toEqual(expected);
      expect(scanWhole(xml, column).merges).toEqual(["D2:D3"]);
      for (let at = 0; at <= xml.length; at += 97) {
        expect(scanPieces([xml.slice(0, at), xml.slice(at)], column).rows, `split at ${at}`).toEqual(
          expected,
        );
      }
    }
  });

  it("numbers rows and cells that carry no reference from the ones before them", () => {
    const xml =
      `<worksheet ${NS}><sheetData><row><c t="inlineStr"><is><t>a</t></is></c><c><v>1</v></c></row>` +
      '<row r="5"><c r="C5"><v>2</v></c><c><v>3</v></c><c s="1"/><c><v>4</v></c></row><row><c><v>5</v></c></row >' +
      '<row r="8"/><row><c><v>6</v></c></row>' +
      "</sheetData></worksheet>";
    const { rows } = scanWhole(xml);
    expect(rows.map((r) => [r.number, r.cells.map((c) => [c.column, c.value])])).toEqual([
      [
        1,
        [
          [0, "a"],
          [1, "1"],
        ],
      ],
      [
        5,
        [
          [2, "2"],
          [3, "3"],
          [5, "4"],
        ],
      ],
      [6, [[0, "5"]]],
      [8, []],
      [9, [[0, "6"]]],
    ]);
  });

  it("reads elements with a namespace prefix, as some .NET generators write them", () => {
    const xml =
      '<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>' +
      '<x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>hello</x:t></x:is></x:c><x:c r="B1"><x:v>7</x:v></x:c></x:row>' +
      '</x:sheetData><x:mergeCells><x:mergeCell ref="A1:B1"/></x:mergeCells></x:worksheet>';
    const whole = scanWhole(xml);
    expect(whole.rows).toEqual([
      {
        number: 1,
        cells: [
          { column: 0, type: "inlineStr", style: 0, value: "hello", formula: false },
          { column: 1, type: "", style: 0, value: "7", formula: false },
        ],
      },
    ]);
    expect(whole.merges).toEqual(["A1:B1"]);
    expect(scanPieces([...xml])).toEqual(whole);
  });

  it("refuses a worksheet that ends in the middle of a row", () => {
    const scanner = new WorksheetScanner();
    scanner.feed(`<worksheet ${NS}><sheetData><row r="1"><c r="A1"><v>1</v></c>`);
    expect(() => scanner.end()).toThrow(expect.objectContaining({ code: "FILE_CORRUPT" }));
  });
});

describe("SharedStringsParser", () => {
  const SST =
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst ${NS} count="7" uniqueCount="7">` +
    "<si><t>reference</t></si>" +
    '<si><t xml:space="preserve"> padded &amp; kept </t></si>' +
    // Rich text: runs joined, formatting ignored.
    '<si><r><t>Hello </t></r><r><rPr><b/><sz val="11"/></rPr><t>world</t></r></si>' +
    // Japanese Excel: phonetic guides are reading aids, not text.
    '<si><t>山田太郎</t><rPh sb="0" eb="2"><t>ヤマダ</t></rPh><phoneticPr fontId="1"/></si>' +
    "<si/>" +
    "<si><t/></si>" +
    "<si><t>line one&#10;line two\r\n€</t></si>" +
    "</sst>";
  const EXPECTED = [
    "reference",
    " padded & kept ",
    "Hello world",
    "山田太郎",
    "",
    "",
    "line one\nline two\n€",
  ];

  it("reads each entry's text: runs joined, phonetic guides and formatting left out", () => {
    expect(sharedStrings([SST])).toEqual(EXPECTED);
  });

  it("gives the same table however the XML is split into chunks", () => {
    for (let at = 0; at <= SST.length; at++) {
      expect(sharedStrings([SST.slice(0, at), SST.slice(at)]), `split at ${at}`).toEqual(EXPECTED);
    }
    expect(sharedStrings([...SST])).toEqual(EXPECTED);
  });

  it("looks up entries across many chunks, and nothing outside the table", () => {
    const parser = new SharedStringsParser();
    parser.feed(`<sst ${NS} uniqueCount="3">`);
    const texts: string[] = [];
    for (let chunk = 0; chunk < 50; chunk++) {
      let xml = "";
      for (let i = 0; i < 100; i++) {
        const text = `Zahlung ${chunk}-${i} für Müller ${"x".repeat(i % 13)}`;
        texts.push(text);
        xml += `<si><t>${text}</t></si>`;
      }
      parser.feed(xml);
    }
    parser.feed("</sst>");
    const table = parser.end();
    expect(table.count).toBe(5000);
    expect(Array.from({ length: table.count }, (_, i) => table.get(i))).toEqual(texts);
    for (const outside of [-1, 5000, 1.5, Number.NaN]) expect(table.get(outside)).toBeUndefined();
  });

  it("refuses a table that ends in the middle of an entry", () => {
    const parser = new SharedStringsParser();
    parser.feed(`<sst ${NS}><si><t>cut here`);
    expect(() => parser.end()).toThrow(expect.objectContaining({ code: "FILE_CORRUPT" }));
  });
});
