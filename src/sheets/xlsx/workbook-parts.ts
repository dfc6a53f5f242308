/**
 * The workbook's small parts, read whole (they are bounded by `maxSmallPartBytes`): `xl/workbook.xml`
 * (the sheets and the date system), its relationships (where each sheet's part is) and `xl/styles.xml`
 * (each cell format's number format). Pure functions over the part's text, no I/O.
 *
 * Only the few elements and attributes we need are looked at; names may carry a namespace prefix
 * (`x:sheet`, Strict OOXML and some generators write them). Comments are dropped first; a DTD never
 * reaches here (it is refused while the part is decoded).
 */
import { attributeValue, isNameChar, localNameStart, tagEnd, xmlText } from "./xml-text.js";

/** One open (or empty) tag: its local name and its attributes' text `s[from, to)`. */
interface Tag {
  local: string;
  /** The attributes' text, for `attributeValue(s, from, to, name)`. */
  from: number;
  to: number;
  selfClosing: boolean;
}

/** Every tag of `s` (without comments) in document order; declarations and instructions skipped. */
function* tags(s: string): Generator<Tag | { close: string }> {
  let lt = s.indexOf("<");
  while (lt >= 0) {
    const first = s.charCodeAt(lt + 1);
    let nameEnd = first === 0x2f /* / */ ? lt + 2 : lt + 1;
    while (nameEnd < s.length && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
    const gt = tagEnd(s, nameEnd);
    if (gt < 0) return;
    if (first === 0x2f /* / */) {
      yield { close: s.slice(localNameStart(s, lt + 2, nameEnd), nameEnd) };
    } else if (first !== 0x21 /* ! */ && first !== 0x3f /* ? */) {
      yield {
        local: s.slice(localNameStart(s, lt + 1, nameEnd), nameEnd),
        from: nameEnd,
        to: gt,
        selfClosing: s.charCodeAt(gt - 1) === 0x2f,
      };
    }
    lt = s.indexOf("<", gt + 1);
  }
}

/** The tags of a part with the text they index into (comments dropped), for reading attributes. */
function* tagsWithText(xml: string): Generator<{ tag: Tag | { close: string }; text: string }> {
  const text = xml.indexOf("<!--") >= 0 ? xml.replace(/<!--[\s\S]*?-->/g, "") : xml;
  for (const tag of tags(text)) yield { tag, text };
}

/**
 * A prefixed attribute by local name whatever its prefix (`r:id`, `ns1:id`): relationship ids are
 * namespaced and writers pick their own prefix.
 */
function prefixedAttribute(s: string, tag: Tag, local: string): string | undefined {
  const attrs = s.slice(tag.from, tag.to);
  const match = new RegExp(`(?:^|\\s)[A-Za-z_][\\w.-]*:${local}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(attrs);
  if (!match) return undefined;
  return xmlText(match[1] ?? match[2] ?? "");
}

export interface WorkbookSheet {
  name: string;
  /** The relationship id of its part. */
  relationshipId: string;
  hidden: boolean;
}

export interface WorkbookInfo {
  sheets: WorkbookSheet[];
  /** Dates count from 1904 (old Mac Excel). XML booleans may be written "1" or "true" (LibreOffice). */
  date1904: boolean;
}

/** `xl/workbook.xml`: the sheets in the workbook's order, and the date system. */
export function parseWorkbook(xml: string): WorkbookInfo {
  const sheets: WorkbookSheet[] = [];
  let date1904 = false;
  for (const { tag, text } of tagsWithText(xml)) {
    if ("close" in tag) continue;
    if (tag.local === "workbookPr") {
      const value = attributeValue(text, tag.from, tag.to, "date1904");
      date1904 = value === "1" || value === "true";
    } else if (tag.local === "sheet") {
      const name = attributeValue(text, tag.from, tag.to, "name");
      const relationshipId = prefixedAttribute(text, tag, "id");
      if (name === undefined || relationshipId === undefined) continue;
      const state = attributeValue(text, tag.from, tag.to, "state") ?? "visible";
      sheets.push({ name, relationshipId, hidden: state !== "visible" });
    }
  }
  return { sheets, date1904 };
}

export interface Relationship {
  type: string;
  target: string;
}

/** A relationships part: `Id` → type and target; external targets (links to other files) are left out. */
export function parseRelationships(xml: string): Map<string, Relationship> {
  const relationships = new Map<string, Relationship>();
  for (const { tag, text } of tagsWithText(xml)) {
    if ("close" in tag || tag.local !== "Relationship") continue;
    const id = attributeValue(text, tag.from, tag.to, "Id");
    const type = attributeValue(text, tag.from, tag.to, "Type");
    const target = attributeValue(text, tag.from, tag.to, "Target");
    if (attributeValue(text, tag.from, tag.to, "TargetMode") === "External") continue;
    if (id !== undefined && type !== undefined && target !== undefined)
      relationships.set(id, { type, target });
  }
  return relationships;
}

/**
 * The number format codes of Excel's built-in formats (ECMA-376 part 1, 18.8.30) that have one fixed
 * code; the locale-dependent ones (27–36, 50–81) have none here and read as plain numbers.
 */
const BUILT_IN_FORMATS: Readonly<Record<number, string>> = {
  0: "General",
  1: "0",
  2: "0.00",
  3: "#,##0",
  4: "#,##0.00",
  9: "0%",
  10: "0.00%",
  11: "0.00E+00",
  12: "# ?/?",
  13: "# ??/??",
  14: "mm-dd-yy",
  15: "d-mmm-yy",
  16: "d-mmm",
  17: "mmm-yy",
  18: "h:mm AM/PM",
  19: "h:mm:ss AM/PM",
  20: "h:mm",
  21: "h:mm:ss",
  22: 'm/d/yy "h":mm',
  37: "#,##0 ;(#,##0)",
  38: "#,##0 ;[Red](#,##0)",
  39: "#,##0.00 ;(#,##0.00)",
  40: "#,##0.00 ;[Red](#,##0.00)",
  45: "mm:ss",
  46: "[h]:mm:ss",
  47: "mmss.0",
  48: "##0.0E+0",
  49: "@",
};

/**
 * `xl/styles.xml`: the number format code of each cell format, by the index a cell's `s` attribute
 * names (the `<xf>`s of `<cellXfs>`, in order; `<cellStyleXfs>` holds named styles, not cell formats).
 */
export function parseCellFormats(xml: string): (index: number) => string | undefined {
  const custom = new Map<number, string>();
  const formatIds: number[] = [];
  let inCellXfs = false;
  for (const { tag, text } of tagsWithText(xml)) {
    if ("close" in tag) {
      if (tag.close === "cellXfs") inCellXfs = false;
      continue;
    }
    if (tag.local === "numFmt") {
      const id = Number(attributeValue(text, tag.from, tag.to, "numFmtId"));
      const code = attributeValue(text, tag.from, tag.to, "formatCode");
      if (Number.isInteger(id) && code !== undefined) custom.set(id, code);
    } else if (tag.local === "cellXfs") {
      inCellXfs = !tag.selfClosing;
    } else if (tag.local === "xf" && inCellXfs) {
      formatIds.push(Number(attributeValue(text, tag.from, tag.to, "numFmtId") ?? 0));
    }
  }
  return (index) => {
    const id = formatIds[index];
    if (id === undefined || !Number.isInteger(id)) return undefined;
    return custom.get(id) ?? BUILT_IN_FORMATS[id];
  };
}
