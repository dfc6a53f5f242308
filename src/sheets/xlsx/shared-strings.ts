/**
 * The workbook's shared-strings table (`xl/sharedStrings.xml`), read as a stream and stored compactly.
 *
 * Excel writes every text cell as an index into this table, so a sheet with a unique reference and memo
 * per row has a table as long as the sheet. Held as an array of JS strings, 300,000 entries cost tens of
 * megabytes of small heap objects (and V8 sizes its old generation at a multiple of that), which made
 * peak memory grow with the row count. Here the texts of each decoded chunk are joined into one string
 * (a segment) and two Uint32Arrays say where each entry starts: about one byte per character of text
 * plus 4 bytes per entry. A lookup slices the segment, which V8 does without copying.
 */
import { DEFAULT_SHEET_LIMITS, limitExceeded, type SheetLimits } from "../limits.js";
import { SheetReadError } from "../types.js";
import { stringItemText } from "./string-item.js";
import {
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

/** Read-only view of the table: the text of entry `index`, or undefined when there is no such entry. */
export interface SharedStringLookup {
  readonly count: number;
  get(index: number): string | undefined;
}

/** The compact table itself. Fill it with `SharedStringsParser`. */
export class SharedStrings implements SharedStringLookup {
  /** The entries' texts, joined a chunk at a time. */
  private readonly segments: string[] = [];
  /** Index of the first entry of each segment (ascending), to find an entry's segment. */
  private readonly firstOfSegment: number[] = [];
  /** Where each entry starts in its segment; it ends where the next starts, or at the segment's end. */
  private starts: Uint32Array;
  private size = 0;

  constructor(capacity = 1024) {
    this.starts = new Uint32Array(Math.max(16, capacity));
  }

  get count(): number {
    return this.size;
  }

  get(index: number): string | undefined {
    if (!(index >= 0 && index < this.size) || !Number.isInteger(index)) return undefined; // NaN too
    // Binary search for the last segment starting at or before the entry (a few hundred segments).
    const firsts = this.firstOfSegment;
    let low = 0;
    let high = firsts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((firsts[middle] as number) <= index) low = middle;
      else high = middle - 1;
    }
    const text = this.segments[low] as string;
    const next = index + 1;
    const nextSegmentFirst = firsts[low + 1] ?? this.size;
    const end = next < nextSegmentFirst ? (this.starts[next] as number) : text.length;
    return text.slice(this.starts[index], end);
  }

  /** Appends one segment: the entries' texts, in order. */
  addSegment(texts: readonly string[]): void {
    if (texts.length === 0) return;
    this.ensureCapacity(this.size + texts.length);
    this.firstOfSegment.push(this.size);
    let offset = 0;
    for (const text of texts) {
      this.starts[this.size] = offset;
      offset += text.length;
      this.size++;
    }
    this.segments.push(texts.join(""));
  }

  private ensureCapacity(wanted: number): void {
    if (wanted <= this.starts.length) return;
    let capacity = this.starts.length * 2;
    while (capacity < wanted) capacity *= 2;
    const starts = new Uint32Array(capacity);
    starts.set(this.starts.subarray(0, this.size));
    this.starts = starts;
  }
}

type StringLimits = Pick<SheetLimits, "maxCellChars" | "maxRowChars">;

/** Largest table size we trust from `uniqueCount` for pre-sizing (a damaged file could claim billions). */
const MAX_PRESIZE = 1 << 20;

/**
 * Streaming parser of `xl/sharedStrings.xml`: feed it the decoded text in chunks of any size (a chunk
 * may end anywhere, even inside a tag), then call `end()`.
 */
export class SharedStringsParser {
  private table: SharedStrings | undefined;
  private pending = "";
  private count = 0;

  constructor(private readonly limits: StringLimits = DEFAULT_SHEET_LIMITS) {}

  feed(chunk: string): void {
    const s = this.pending.length > 0 ? this.pending + chunk : chunk;
    const texts: string[] = [];
    const lastMarkup = lastMarkupIndex(s);
    let p = 0;
    for (;;) {
      const lt = s.indexOf("<", p);
      if (lt < 0) {
        p = s.length;
        break;
      }
      if (lt + 1 >= s.length) {
        p = lt;
        break;
      }
      if (s.startsWith("<si><t>", lt)) {
        // Fast path, what Excel writes for plain text: <si><t>text</t></si>.
        const end = s.indexOf("<", lt + 7);
        if (end >= 0 && s.startsWith("</t></si>", end)) {
          texts.push(xmlText(s.slice(lt + 7, end)));
          p = end + 9;
          continue;
        }
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
      while (nameEnd < s.length && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
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
      if (nameIs(s, local, nameEnd, "si")) {
        if (s.charCodeAt(gt - 1) === CHAR.SLASH) {
          texts.push("");
          p = gt + 1;
          continue;
        }
        const close = findCloseTag(s, closeNeedle(s, lt + 1, nameEnd), gt + 1, lastMarkup);
        if (close < 0) {
          p = lt;
          break;
        }
        texts.push(stringItemText(s, gt + 1, close, lastMarkup));
        p = s.indexOf(">", close) + 1;
        continue;
      }
      if (this.table === undefined && nameIs(s, local, nameEnd, "sst"))
        this.table = this.presized(s, nameEnd, gt);
      p = gt + 1;
    }
    this.pending = p < s.length ? s.slice(p) : "";
    this.checkLimits(texts);
    this.tableNow().addSegment(texts);
  }

  end(): SharedStrings {
    if (this.pending.trim() !== "") {
      throw new SheetReadError(
        "FILE_CORRUPT",
        "the workbook is damaged (its shared strings end in the middle of an entry); save it again",
      );
    }
    return this.tableNow();
  }

  /** A string longer than a cell may be, or an entry whose XML never ends, refuses the file. */
  private checkLimits(texts: readonly string[]): void {
    const { maxCellChars } = this.limits;
    for (let i = 0; i < texts.length; i++) {
      if ((texts[i] as string).length > maxCellChars) {
        throw limitExceeded("maxCellChars", `shared string ${this.count + i + 1} holds`, this.limits);
      }
    }
    this.count += texts.length;
    if (this.pending.length > this.limits.maxRowChars) {
      throw limitExceeded("maxRowChars", `the XML of shared string ${this.count + 1} is`, this.limits);
    }
  }

  private tableNow(): SharedStrings {
    this.table ??= new SharedStrings();
    return this.table;
  }

  private presized(s: string, from: number, to: number): SharedStrings {
    const match = /\buniqueCount\s*=\s*["']([0-9]+)["']/.exec(s.slice(from, to));
    const claimed = match?.[1] ? Number(match[1]) : 0;
    return new SharedStrings(Math.min(claimed, MAX_PRESIZE));
  }
}
