/**
 * Hostile XLSX files, generated at test time and kept small on disk: a worksheet that inflates to a
 * gigabyte of tiny rows (a zip bomb), one giant shared string, one giant inline cell, a DTD in
 * workbook.xml, an oversized workbook.xml. The zip is written by hand so that a part of any inflated
 * size costs only its compressed bytes to build: one deflated segment, flushed so that it stands alone,
 * is repeated as many times as wanted (a raw deflate stream is a sequence of blocks).
 */
import { writeFile } from "node:fs/promises";
import { constants, crc32, deflateRawSync } from "node:zlib";

interface ZipPart {
  name: string;
  /** Raw deflate data. */
  data: Buffer;
  uncompressedSize: number;
  crc: number;
}

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const REL_NS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const REL_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const MiB = 1024 * 1024;

function part(name: string, text: string): ZipPart {
  const bytes = Buffer.from(text, "utf8");
  return { name, data: deflateRawSync(bytes), uncompressedSize: bytes.length, crc: crc32(bytes) };
}

/**
 * A part of `head`, then `unit` repeated until about `totalBytes`, then `tail`: built from one deflated
 * copy of a 1 MiB run of units, repeated. `declaredSize` (default: the true size) is what the zip says.
 */
function repeatedPart(
  name: string,
  head: string,
  unit: string,
  totalBytes: number,
  tail: string,
  declaredSize?: number,
): ZipPart {
  const run = Buffer.from(unit.repeat(Math.max(1, Math.floor(MiB / unit.length))), "utf8");
  const copies = Math.max(1, Math.floor(totalBytes / run.length));
  const flush = { finishFlush: constants.Z_FULL_FLUSH };
  const headBytes = Buffer.from(head, "utf8");
  const tailBytes = Buffer.from(tail, "utf8");
  const runDeflated = deflateRawSync(run, flush);
  const data = Buffer.concat([
    deflateRawSync(headBytes, flush),
    ...Array.from({ length: copies }, () => runDeflated),
    deflateRawSync(tailBytes), // ends with the final block
  ]);
  const size = headBytes.length + copies * run.length + tailBytes.length;
  // The CRC is never checked before the limits refuse the part; computing it over a gigabyte is not needed.
  return { name, data, uncompressedSize: declaredSize ?? size, crc: 0 };
}

async function writeZip(path: string, parts: ZipPart[]): Promise<void> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const name = Buffer.from(p.name, "utf8");
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflated
    local.writeUInt32LE(p.crc >>> 0, 14);
    local.writeUInt32LE(p.data.length, 18);
    local.writeUInt32LE(p.uncompressedSize, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(p.crc >>> 0, 16);
    central.writeUInt32LE(p.data.length, 20);
    central.writeUInt32LE(p.uncompressedSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, p.data);
    centrals.push(central, name);
    offset += local.length + name.length + p.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  await writeFile(path, Buffer.concat([...locals, directory, end]));
}

const HEADER_ROW =
  '<row r="1"><c r="A1" t="inlineStr"><is><t>to_account</t></is></c><c r="B1" t="inlineStr"><is><t>amount</t></is></c></row>';

interface WorkbookOptions {
  sheetXml?: ZipPart;
  sharedStrings?: ZipPart;
  workbookXml?: string;
}

function workbookParts(options: WorkbookOptions): ZipPart[] {
  const workbook =
    options.workbookXml ??
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook ${NS} ${REL_NS}><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets></workbook>`;
  return [
    part(
      "[Content_Types].xml",
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>',
    ),
    part("xl/workbook.xml", workbook),
    part(
      "xl/_rels/workbook.xml.rels",
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL_TYPE}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL_TYPE}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
    options.sheetXml ??
      part(
        "xl/worksheets/sheet1.xml",
        `<worksheet ${NS}><sheetData>${HEADER_ROW}<row r="2"><c r="A2" t="inlineStr"><is><t>acct_1</t></is></c><c r="B2"><v>5</v></c></row></sheetData></worksheet>`,
      ),
    ...(options.sharedStrings ? [options.sharedStrings] : []),
  ];
}

/** A worksheet of a header and then `inflatedBytes` of tiny rows, declared truthfully (or as `declaredSize`). */
export async function writeRowBomb(
  path: string,
  inflatedBytes: number,
  declaredSize?: number,
): Promise<void> {
  const sheet = repeatedPart(
    "xl/worksheets/sheet1.xml",
    `<worksheet ${NS}><sheetData>${HEADER_ROW}`,
    "<row/>",
    inflatedBytes,
    "</sheetData></worksheet>",
    declaredSize,
  );
  await writeZip(path, workbookParts({ sheetXml: sheet }));
}

/** One shared string of `chars` characters, used by the data row's to_account cell. */
export async function writeGiantSharedString(path: string, chars: number): Promise<void> {
  const strings = repeatedPart(
    "xl/sharedStrings.xml",
    `<sst ${NS} count="1" uniqueCount="1"><si><t>`,
    "A",
    chars,
    "</t></si></sst>",
  );
  const sheet = part(
    "xl/worksheets/sheet1.xml",
    `<worksheet ${NS}><sheetData>${HEADER_ROW}<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2"><v>5</v></c></row></sheetData></worksheet>`,
  );
  await writeZip(path, workbookParts({ sheetXml: sheet, sharedStrings: strings }));
}

/** One inline-string cell of `chars` characters in the data row. */
export async function writeGiantInlineCell(path: string, chars: number): Promise<void> {
  const sheet = repeatedPart(
    "xl/worksheets/sheet1.xml",
    `<worksheet ${NS}><sheetData>${HEADER_ROW}<row r="2"><c r="A2" t="inlineStr"><is><t>`,
    "A",
    chars,
    '</t></is></c><c r="B2"><v>5</v></c></row></sheetData></worksheet>',
  );
  await writeZip(path, workbookParts({ sheetXml: sheet }));
}

/** workbook.xml with a DTD declaring a (small) entity bomb that the sheet name uses. */
export async function writeDtdWorkbook(path: string): Promise<void> {
  const entities = ['<!ENTITY a "aaaaaaaaaa">'];
  for (let i = 1; i < 8; i++) entities.push(`<!ENTITY a${i} "${`&a${i > 1 ? i - 1 : ""};`.repeat(10)}">`);
  const workbookXml = `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE workbook [${entities.join("")}]>\n<workbook ${NS} ${REL_NS}><sheets><sheet name="&a7;" sheetId="1" r:id="rId1"/></sheets></workbook>`;
  await writeZip(path, workbookParts({ workbookXml }));
}

/** workbook.xml inflating to about `bytes` (a comment of spaces, as a padding attack would). */
export async function writeOversizedWorkbook(path: string, bytes: number): Promise<void> {
  const workbook = repeatedPart(
    "xl/workbook.xml",
    `<?xml version="1.0" encoding="UTF-8"?>\n<workbook ${NS} ${REL_NS}><sheets><sheet name="Payouts" sheetId="1" r:id="rId1"/></sheets><!--`,
    "          ",
    bytes,
    "--></workbook>",
  );
  const parts = workbookParts({}).map((p) => (p.name === "xl/workbook.xml" ? workbook : p));
  await writeZip(path, parts);
}

/**
 * One of each hostile file past the default limits, by file name: what every way in (`payouts
 * validate`, the watched folder) is tried with. Each test names the limit it expects for each.
 */
export const HOSTILE_FILES: ReadonlyArray<readonly [name: string, write: (path: string) => Promise<void>]> = [
  ["row-bomb.xlsx", (f) => writeRowBomb(f, 1100 * MiB)],
  ["giant-shared.xlsx", (f) => writeGiantSharedString(f, 1000 * MiB)],
  ["giant-inline.xlsx", (f) => writeGiantInlineCell(f, 1000 * MiB)],
  ["dtd.xlsx", writeDtdWorkbook],
  ["big-workbook.xlsx", (f) => writeOversizedWorkbook(f, 40 * MiB)],
];
