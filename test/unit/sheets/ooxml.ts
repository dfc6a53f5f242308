/**
 * Builds XLSX files from raw OOXML parts with jszip, the way Excel, LibreOffice and Google Sheets write
 * them, so the reader is tested against other tools' files and not only against exceljs's own writer.
 */
import { writeFile } from "node:fs/promises";
import JSZip from "jszip";

export interface RawSheet {
  name: string;
  /** The `<sheetData>` inner XML. */
  rows: string;
  /** Extra XML after `</sheetData>` (e.g. `<mergeCells>`). */
  after?: string;
  state?: "hidden";
}

export interface RawWorkbook {
  sheets: RawSheet[];
  /** `<si>` inner XML per shared string, e.g. `<t>amount</t>`. */
  sharedStrings?: string[];
  /** `<numFmts>` and `<cellXfs>` inner XML; index 0 of cellXfs is the default style. */
  numFmts?: string;
  cellXfs?: string;
  date1904?: boolean;
  /** Order in which parts are added to the zip (LibreOffice writes styles after the worksheets). */
  order?: "excel" | "libreoffice";
}

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const REL_NS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

export async function writeRawXlsx(path: string, book: RawWorkbook): Promise<void> {
  const parts = new Map<string, string>();
  const sheets = book.sheets;
  parts.set(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${sheets
      .map(
        (_, i) =>
          `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
      )
      .join(
        "",
      )}<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
  );
  parts.set(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL_TYPE}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  );
  const workbook = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook ${NS} ${REL_NS}><workbookPr${book.date1904 ? ' date1904="1"' : ""}/><sheets>${sheets
    .map(
      (s, i) =>
        `<sheet name="${s.name}" sheetId="${i + 1}"${s.state ? ` state="${s.state}"` : ""} r:id="rId${i + 1}"/>`,
    )
    .join("")}</sheets></workbook>`;
  const rels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets
    .map(
      (_, i) =>
        `<Relationship Id="rId${i + 1}" Type="${REL_TYPE}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
    )
    .join(
      "",
    )}<Relationship Id="rId90" Type="${REL_TYPE}/styles" Target="styles.xml"/><Relationship Id="rId91" Type="${REL_TYPE}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`;
  const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet ${NS}>${book.numFmts ? `<numFmts>${book.numFmts}</numFmts>` : ""}<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs>${
    book.cellXfs ?? '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
  }</cellXfs></styleSheet>`;
  const strings = book.sharedStrings ?? [];
  const sharedStrings = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst ${NS} count="${strings.length}" uniqueCount="${strings.length}">${strings.map((s) => `<si>${s}</si>`).join("")}</sst>`;
  const sheetParts = sheets.map(
    (s) =>
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet ${NS} ${REL_NS}><sheetData>${s.rows}</sheetData>${s.after ?? ""}</worksheet>`,
  );
  const add = (name: string, xml: string) => parts.set(name, xml);
  if (book.order === "libreoffice") {
    // LibreOffice: relationships and shared strings first, worksheets, then styles and the workbook.
    add("xl/_rels/workbook.xml.rels", rels);
    add("xl/sharedStrings.xml", sharedStrings);
    for (const [i, xml] of sheetParts.entries()) add(`xl/worksheets/sheet${i + 1}.xml`, xml);
    add("xl/styles.xml", styles);
    add("xl/workbook.xml", workbook);
  } else {
    add("xl/workbook.xml", workbook);
    add("xl/_rels/workbook.xml.rels", rels);
    for (const [i, xml] of sheetParts.entries()) add(`xl/worksheets/sheet${i + 1}.xml`, xml);
    add("xl/styles.xml", styles);
    add("xl/sharedStrings.xml", sharedStrings);
  }
  const zip = new JSZip();
  for (const [name, xml] of parts) zip.file(name, xml);
  await writeFile(path, await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }));
}

/** XML-escapes text for a cell or shared string. */
export function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A row of shared-string cells starting at column A; `strings` receives the texts. */
export function sharedStringRow(row: number, texts: string[], strings: string[]): string {
  const cells = texts.map((text, i) => {
    strings.push(`<t>${xml(text)}</t>`);
    return `<c r="${String.fromCharCode(65 + i)}${row}" t="s"><v>${strings.length - 1}</v></c>`;
  });
  return `<row r="${row}">${cells.join("")}</row>`;
}
