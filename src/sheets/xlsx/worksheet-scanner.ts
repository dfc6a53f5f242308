/**
 * Streaming scanner of a worksheet part (`xl/worksheets/sheetN.xml`): turns the decoded XML, fed in
 * chunks that may end anywhere, into rows of raw cells, and collects the merged ranges. Pure, no I/O.
 *
 * It reads only what a payout sheet needs: `<row r>`, `<c r t s>` with its `<v>`, `<f>` (only whether
 * there is one: the cached result is what Excel shows) and inline strings `<is>` (rich-text runs joined,
 * phonetic guides left out), plus `<mergeCell ref>`. Everything else (column widths, views, extension
 * lists, comments, processing instructions) is skipped. Element names may carry a namespace prefix.
 *
 * A row is handed out once its `</row>` has arrived, so each row is parsed from one string; a chunk
 * boundary inside a row only delays it to the next chunk.
 */
import { DEFAULT_SHEET_LIMITS, limitExceeded, type SheetLimits } from "../limits.js";
import { columnLetter, SheetReadError } from "../types.js";
import { stringItemText, textContent } from "./string-item.js";
import {
  attributeValue,
  CHAR,
  closeNeedle,
  findCloseTag,
  isNameChar,
  lastMarkupIndex,
  localNameStart,
  markupEnd,
  nameIs,
  tagEnd,
  xmlText,
} from "./xml-text.js";

/** A cell as written in the sheet, before its value is interpreted. */
export interface RawCell {
  /** 0-based column: from the `r` reference, else the column after the previous cell. */
  column: number;
  /** The `t` attribute: `s`, `str`, `inlineStr`, `b`, `e`, `n`, `d`, or "" when absent (a number). */
  type: string;
  /** The `s` attribute: index into the styles' cell formats (0 when absent). */
  style: number;
  /** Text of `<v>` (or of the inline string), references decoded; undefined when the cell has none. */
  value: string | undefined;
  /** The cell has a formula (`<f>`): its value is the cached result. */
  formula: boolean;
}

export interface RawRow {
  /** 1-based row number: from the `r` attribute, else the row after the previous one. */
  number: number;
  cells: RawCell[];
}

const A = 0x41;
const Z = 0x5a;
const ZERO = 0x30;
const NINE = 0x39;

/** 0-based column of a cell reference such as `AB12`; -1 when it does not start with letters. */
export function referenceColumn(s: string, from: number, to: number): number {
  let column = 0;
  let p = from;
  for (; p < to; p++) {
    const code = s.charCodeAt(p);
    if (code < A || code > Z) break;
    column = column * 26 + (code - A + 1);
  }
  return p === from ? -1 : column - 1;
}

/** Non-negative integer written in `s[from, to)` (digits only); -1 when it is not one. */
function digitsValue(s: string, from: number, to: number): number {
  if (from >= to) return -1;
  let value = 0;
  for (let p = from; p < to; p++) {
    const code = s.charCodeAt(p);
    if (code < ZERO || code > NINE) return -1;
    value = value * 10 + (code - ZERO);
  }
  return value;
}

/** The `t` attribute's value, as a constant string for the types Excel writes (no slice per cell). */
function cellType(s: string, from: number, to: number): string {
  const length = to - from;
  if (length === 1) {
    switch (s.charCodeAt(from)) {
      case 0x73:
        return "s";
      case 0x6e:
        return "n";
      case 0x62:
        return "b";
      case 0x65:
        return "e";
      case 0x64:
        return "d";
    }
  } else if (length === 3 && s.startsWith("str", from)) {
    return "str";
  } else if (length === 9 && s.startsWith("inlineStr", from)) {
    return "inlineStr";
  }
  return s.slice(from, to);
}

/**
 * Index of the `</row>` at or after `from`, -1 when absent; for text without comments or CDATA. Searches
 * for "ow": an indexOf for "</row>" stops at every "<" of every cell, "o" is rare in sheet XML.
 */
function rowEnd(s: string, from: number): number {
  let at = s.indexOf("ow", from + 3);
  while (at >= 0) {
    const after = s.charCodeAt(at + 2); // ">", or whitespace before it
    if (
      (after === CHAR.GT || after <= 0x20) &&
      s.charCodeAt(at - 1) === 0x72 /* r */ &&
      s.charCodeAt(at - 2) === CHAR.SLASH &&
      s.charCodeAt(at - 3) === CHAR.LT
    ) {
      return at - 3;
    }
    at = s.indexOf("ow", at + 2);
  }
  return -1;
}

/**
 * A cell tag that does not start `<c r="` (no reference, or another attribute first), or one with a
 * namespace prefix. Text without such a tag lets a one-column pass find its column's cells by searching
 * for `<c r="D` (see `columnCells`). A tag cut off at the end of the text does not count.
 */
const IRREGULAR_CELL = /<c(?=[\s>/])(?! r="|[\s\S]{0,3}$)|:c[\s>/]/;

export class WorksheetScanner {
  /**
   * When >= 0, only cells in this column are read (the others are skipped after their reference), for
   * a pass that needs one column. May be changed between chunks.
   */
  onlyColumn = -1;
  /** Merged ranges (`A1:C1`) seen so far. Excel writes them after all rows. */
  readonly merges = new Set<string>();

  private pending = "";
  /** Where to resume looking for the pending row's close tag (its start is 0 of `pending`). */
  private resumeAt = 0;
  private lastRow = 0;
  private rows: RawRow[] = [];
  /** In a one-column pass over regular text (see IRREGULAR_CELL): `<c r="` and the column's letters. */
  private columnNeedle = "";
  /** Index of the last `<!` (comment, CDATA) in the text being scanned; -1 when there is none. */
  private lastMarkup = -1;

  constructor(private readonly limits: Pick<SheetLimits, "maxRowChars"> = DEFAULT_SHEET_LIMITS) {}

  /** Feeds the next chunk of decoded XML; returns the rows completed by it. */
  feed(chunk: string): RawRow[] {
    this.scan(this.pending.length > 0 ? this.pending + chunk : chunk);
    // An unfinished row is kept whole until its end arrives: bound it, or one giant cell grows it forever.
    if (this.pending.length > this.limits.maxRowChars) {
      throw limitExceeded("maxRowChars", `row ${this.lastRow + 1} of the worksheet is`, this.limits);
    }
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  /** Ends the part; throws FILE_CORRUPT when it stopped inside a row or tag. */
  end(): RawRow[] {
    if (this.pending.trim() !== "") {
      throw new SheetReadError(
        "FILE_CORRUPT",
        "the workbook is damaged (a worksheet ends in the middle of a row); save it again",
      );
    }
    const rows = this.rows;
    this.rows = [];
    return rows;
  }

  private scan(s: string): void {
    // Without comments or CDATA sections (which may hold tags as text), close tags are found by one
    // indexOf and a one-column pass may jump from cell to cell; with them, both go carefully.
    this.lastMarkup = lastMarkupIndex(s);
    this.columnNeedle =
      this.onlyColumn >= 0 && this.lastMarkup < 0 && !IRREGULAR_CELL.test(s)
        ? `<c r="${columnLetter(this.onlyColumn)}`
        : "";
    const length = s.length;
    let p = 0;
    let resumeAt = this.resumeAt;
    this.resumeAt = 0;
    for (;;) {
      const lt = s.indexOf("<", p);
      if (lt < 0) {
        p = length;
        break;
      }
      if (lt + 1 >= length) {
        p = lt;
        break;
      }
      const first = s.charCodeAt(lt + 1);
      if (first === CHAR.BANG || first === CHAR.QUESTION) {
        const end = markupEnd(s, lt);
        if (end < 0) {
          p = lt;
          break;
        }
        p = end;
        continue;
      }
      let nameEnd = lt + 1;
      while (nameEnd < length && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
      const gt = tagEnd(s, nameEnd);
      if (gt < 0) {
        p = lt;
        break;
      }
      if (first === CHAR.SLASH) {
        p = gt + 1;
        continue;
      }
      const local = localNameStart(s, lt + 1, nameEnd);
      if (nameIs(s, local, nameEnd, "row")) {
        const number = this.rowNumber(s, nameEnd, gt);
        if (s.charCodeAt(gt - 1) === CHAR.SLASH) {
          this.lastRow = number;
          this.rows.push({ number, cells: [] });
          p = gt + 1;
          continue;
        }
        const needle = closeNeedle(s, lt + 1, nameEnd);
        // Resume where the last chunk's search stopped, unless a comment may have begun before that.
        const from = this.lastMarkup < 0 ? Math.max(gt + 1, lt + resumeAt) : gt + 1;
        const close =
          needle === "</row" && this.lastMarkup < 0
            ? rowEnd(s, from)
            : findCloseTag(s, needle, from, this.lastMarkup);
        resumeAt = 0;
        if (close < 0) {
          // Keep the row for the next chunk; do not search its start again.
          this.resumeAt = Math.max(0, length - lt - needle.length - 1);
          p = lt;
          break;
        }
        // Committed only now that the row is complete, so an incomplete row is read again whole.
        this.lastRow = number;
        const cells =
          this.columnNeedle !== "" && local === lt + 1
            ? this.columnCells(s, gt + 1, close)
            : this.cells(s, gt + 1, close);
        this.rows.push({ number, cells });
        p = s.indexOf(">", close) + 1;
        continue;
      }
      if (nameIs(s, local, nameEnd, "mergeCell")) {
        const ref = attributeValue(s, nameEnd, gt, "ref");
        if (ref && /^[A-Z]+[0-9]+:[A-Z]+[0-9]+$/.test(ref)) this.merges.add(ref);
      }
      p = gt + 1;
    }
    this.pending = p < length ? s.slice(p) : "";
  }

  private rowNumber(s: string, from: number, to: number): number {
    if (s.startsWith(' r="', from)) {
      // Fast path: <row r="12" ...>, as every writer puts it.
      let number = 0;
      let p = from + 4;
      let code = s.charCodeAt(p);
      while (code >= ZERO && code <= NINE) {
        number = number * 10 + (code - ZERO);
        code = s.charCodeAt(++p);
      }
      if (code === CHAR.QUOTE && p > from + 4 && number > 0) return number;
    }
    const r = attributeValue(s, from, to, "r");
    const number = r === undefined ? -1 : digitsValue(r, 0, r.length);
    return number > 0 ? number : this.lastRow + 1;
  }

  // The attributes readCellTag found, in fields so that the per-cell loop allocates nothing for them.
  private tagColumn = -1;
  private tagType = "";
  private tagStyle = 0;

  /**
   * Reads the attributes of a `<c` open tag from `from` (just after its name) up to its `>`: r, s and t
   * into the tag fields. Returns the index of the `>`, or -1 when the tag is not well formed before `to`.
   */
  private readCellTag(s: string, from: number, to: number): number {
    let column = -1;
    let type = "";
    let style = 0;
    let p = from;
    for (;;) {
      let code = s.charCodeAt(p);
      while (p < to && code <= 0x20) code = s.charCodeAt(++p);
      if (p >= to) return -1;
      if (code === CHAR.GT) break;
      if (code === CHAR.SLASH) {
        if (s.charCodeAt(p + 1) !== CHAR.GT) return -1;
        p++;
        break;
      }
      // Fast path: a one-letter attribute written name="value", as every writer does for r, s and t.
      if (s.charCodeAt(p + 1) === 0x3d && s.charCodeAt(p + 2) === CHAR.QUOTE) {
        let q = p + 3;
        let c = s.charCodeAt(q);
        if (code === 0x72 /* r */) {
          let letters = 0;
          while (c >= A && c <= Z) {
            letters = letters * 26 + (c - A + 1);
            c = s.charCodeAt(++q);
          }
          column = q > p + 3 ? letters - 1 : -1;
        } else if (code === 0x73 /* s */) {
          let digits = 0;
          while (c >= ZERO && c <= NINE) {
            digits = digits * 10 + (c - ZERO);
            c = s.charCodeAt(++q);
          }
          style = c === CHAR.QUOTE ? digits : 0;
        }
        while (q < to && c !== CHAR.QUOTE) c = s.charCodeAt(++q);
        if (q >= to) return -1;
        if (code === 0x74 /* t */) type = cellType(s, p + 3, q);
        p = q + 1;
        continue;
      }
      const nameStart = p;
      while (p < to && code !== 0x3d && code > 0x20) code = s.charCodeAt(++p);
      const nameEnd = p;
      while (p < to && s.charCodeAt(p) !== 0x3d) p++;
      p++;
      while (p < to && s.charCodeAt(p) <= 0x20) p++;
      const quote = s.charCodeAt(p);
      if (quote !== CHAR.QUOTE && quote !== CHAR.APOSTROPHE) return -1;
      const close = s.indexOf(quote === CHAR.QUOTE ? '"' : "'", p + 1);
      if (close < 0 || close >= to) return -1;
      if (nameEnd - nameStart === 1) {
        const attribute = s.charCodeAt(nameStart);
        if (attribute === 0x72 /* r */) column = referenceColumn(s, p + 1, close);
        else if (attribute === 0x74 /* t */) type = cellType(s, p + 1, close);
        else if (attribute === 0x73 /* s */) style = Math.max(0, digitsValue(s, p + 1, close));
      }
      p = close + 1;
    }
    this.tagColumn = column;
    this.tagType = type;
    this.tagStyle = style;
    return p;
  }

  /**
   * The one column's cells of a row whose content is `s[from, to)`, in text where every cell tag starts
   * `<c r="`: found by searching for `<c r="D` followed by a digit (so not DA), which cannot occur in
   * text or attribute values (they hold no "<"). Several searches beat walking past every cell.
   */
  private columnCells(s: string, from: number, to: number): RawCell[] {
    const row = s.slice(from, to);
    const needle = this.columnNeedle;
    const cells: RawCell[] = [];
    let at = row.indexOf(needle);
    while (at >= 0) {
      const after = at + needle.length;
      const code = row.charCodeAt(after);
      if (code >= ZERO && code <= NINE) {
        const next = row.indexOf('<c r="', after);
        for (const cell of this.cells(row, at, next < 0 ? row.length : next)) cells.push(cell);
      }
      at = row.indexOf(needle, after);
    }
    return cells;
  }

  /** The cells of a row whose content is `s[from, to)`. */
  private cells(s: string, from: number, to: number): RawCell[] {
    const cells: RawCell[] = [];
    const only = this.onlyColumn;
    let previous = -1;
    let p = from;
    while (p < to) {
      // After a cell, the next one usually starts right there: look before searching.
      const lt = s.charCodeAt(p) === CHAR.LT ? p : s.indexOf("<", p);
      if (lt < 0 || lt >= to) break;
      const first = s.charCodeAt(lt + 1);
      let nameEnd: number;
      let needle = "</c";
      if (first === 0x63 /* c */ && !isNameChar(s.charCodeAt(lt + 2))) {
        nameEnd = lt + 2; // <c ...>, the tag this loop exists for
        if (
          only >= 0 &&
          lt > this.lastMarkup &&
          s.charCodeAt(lt + 2) === 0x20 &&
          s.charCodeAt(lt + 3) === 0x72 /* r */ &&
          s.charCodeAt(lt + 4) === 0x3d &&
          s.charCodeAt(lt + 5) === CHAR.QUOTE
        ) {
          // A one-column pass: a cell of another column is skipped as soon as its reference is read,
          // to the next "<c" (a cell's content holds no cell; any other tag found there is skipped below).
          let q = lt + 6;
          let letters = 0;
          let code = s.charCodeAt(q);
          while (code >= A && code <= Z) {
            letters = letters * 26 + (code - A + 1);
            code = s.charCodeAt(++q);
          }
          if (q > lt + 6 && letters - 1 !== only) {
            previous = letters - 1;
            // To the next "<c": a short way, so a loop here beats indexOf (which stops at every "<").
            while (q < to && !(code === CHAR.LT && s.charCodeAt(q + 1) === 0x63)) code = s.charCodeAt(++q);
            p = q;
            continue;
          }
        }
      } else {
        if (first === CHAR.BANG || first === CHAR.QUESTION) {
          const end = markupEnd(s, lt);
          p = end < 0 ? to : end;
          continue;
        }
        nameEnd = lt + 1;
        while (nameEnd < to && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
        if (first === CHAR.SLASH || !nameIs(s, localNameStart(s, lt + 1, nameEnd), nameEnd, "c")) {
          // A close tag, or an element of no interest (its children are skipped one by one).
          const gt = tagEnd(s, nameEnd);
          if (gt < 0 || gt >= to) break;
          p = gt + 1;
          continue;
        }
        needle = closeNeedle(s, lt + 1, nameEnd);
      }
      const gt = this.readCellTag(s, nameEnd, to);
      if (gt < 0) break;
      const column = this.tagColumn >= 0 ? this.tagColumn : previous + 1;
      previous = column;
      if (s.charCodeAt(gt - 1) === CHAR.SLASH) {
        p = gt + 1; // <c r="B2" s="3"/>: a formatted cell without a value
        continue;
      }
      const wanted = only < 0 || column === only;
      // Fast path, what Excel and most writers produce: <c ...><v>text</v></c>.
      if (
        s.charCodeAt(gt + 1) === CHAR.LT &&
        s.charCodeAt(gt + 2) === 0x76 &&
        s.charCodeAt(gt + 3) === CHAR.GT
      ) {
        let valueEnd = gt + 4;
        while (valueEnd < to && s.charCodeAt(valueEnd) !== CHAR.LT) valueEnd++;
        if (
          valueEnd + 8 <= to &&
          s.charCodeAt(valueEnd + 1) === CHAR.SLASH &&
          s.charCodeAt(valueEnd + 2) === 0x76 /* v */ &&
          s.charCodeAt(valueEnd + 3) === CHAR.GT &&
          s.charCodeAt(valueEnd + 4) === CHAR.LT &&
          s.charCodeAt(valueEnd + 5) === CHAR.SLASH &&
          s.charCodeAt(valueEnd + 6) === 0x63 /* c */ &&
          s.charCodeAt(valueEnd + 7) === CHAR.GT
        ) {
          if (wanted) {
            const value = xmlText(s.slice(gt + 4, valueEnd));
            cells.push({ column, type: this.tagType, style: this.tagStyle, value, formula: false });
          }
          p = valueEnd + 8;
          continue;
        }
      }
      let close = findCloseTag(s, needle, gt + 1, this.lastMarkup);
      if (close < 0 || close > to) close = to;
      if (wanted) {
        const cell = this.cellContent(s, gt + 1, close, column, this.tagType, this.tagStyle);
        if (cell) cells.push(cell);
      }
      p = close;
    }
    return cells;
  }

  /** A cell from its content `s[from, to)`; undefined when it has neither value nor formula. */
  private cellContent(
    s: string,
    from: number,
    to: number,
    column: number,
    type: string,
    style: number,
  ): RawCell | undefined {
    let value: string | undefined;
    let inline: string | undefined;
    let formula = false;
    let p = from;
    while (p < to) {
      const lt = s.indexOf("<", p);
      if (lt < 0 || lt >= to) break;
      const first = s.charCodeAt(lt + 1);
      if (first === CHAR.BANG || first === CHAR.QUESTION) {
        const end = markupEnd(s, lt);
        p = end < 0 ? to : end;
        continue;
      }
      let nameEnd = lt + 1;
      while (nameEnd < to && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
      const gt = tagEnd(s, nameEnd);
      if (gt < 0 || gt >= to) break;
      p = gt + 1;
      if (first === CHAR.SLASH) continue;
      const local = localNameStart(s, lt + 1, nameEnd);
      const selfClosing = s.charCodeAt(gt - 1) === CHAR.SLASH;
      if (nameIs(s, local, nameEnd, "f")) {
        formula = true;
      } else if (nameIs(s, local, nameEnd, "v")) {
        value = "";
        if (selfClosing) continue;
        const close = findCloseTag(s, closeNeedle(s, lt + 1, nameEnd), gt + 1, this.lastMarkup);
        const end = close < 0 || close > to ? to : close;
        value = textContent(s, gt + 1, end);
        p = end;
        continue;
      } else if (nameIs(s, local, nameEnd, "is")) {
        inline = "";
        if (selfClosing) continue;
        const close = findCloseTag(s, closeNeedle(s, lt + 1, nameEnd), gt + 1, this.lastMarkup);
        const end = close < 0 || close > to ? to : close;
        inline = stringItemText(s, gt + 1, end, this.lastMarkup);
        p = end;
        continue;
      }
      if (selfClosing) continue;
      // Skip the content of <f> and any other child (extLst) whole: formula text is not needed.
      const close = findCloseTag(s, closeNeedle(s, lt + 1, nameEnd), gt + 1, this.lastMarkup);
      if (close >= 0 && close < to) p = close;
    }
    if (inline !== undefined) value = inline;
    if (value === undefined && !formula) return undefined;
    return { column, type, style, value, formula };
  }
}
