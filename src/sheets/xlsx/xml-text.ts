/**
 * The few pieces of XML lexing our OOXML scanners share. Pure functions over strings, no I/O.
 *
 * We do not use a general XML parser for the big parts (worksheets, shared strings): building an event
 * object per tag and per text run costs more than everything else the reader does. The scanners look only
 * for the handful of elements they need and skip the rest; these helpers keep the XML rules they rely on
 * (quoted attributes may hold `>`, comments and CDATA may hold `<`, text needs entity decoding and
 * line-end normalisation) in one place.
 */

const LT = 0x3c; // <
const GT = 0x3e; // >
const SLASH = 0x2f; // /
const QUOTE = 0x22; // "
const APOSTROPHE = 0x27; // '
const BANG = 0x21; // !
const QUESTION = 0x3f; // ?
const COLON = 0x3a; // :

const ENTITY = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(lt|gt|amp|quot|apos));/g;
const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decodeReference(match: string, hex?: string, decimal?: string, name?: string): string {
  if (name) return NAMED[name] ?? match;
  const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
  // Not a character XML allows: keep the reference as written rather than invent a character.
  if (!(code > 0 && code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) return match;
  return String.fromCodePoint(code);
}

/**
 * Text content as an XML parser hands it out: line ends normalised (`\r\n` and a lone `\r` become `\n`,
 * as XML 1.0 section 2.11 requires, before references are expanded so `&#13;` survives) and character
 * and entity references decoded. An unknown entity (not well-formed XML) is kept as written.
 */
export function xmlText(raw: string): string {
  if (raw.length < 24) {
    // Most cell values are short: one look at each character beats two searches.
    let plain = true;
    for (let i = 0; i < raw.length; i++) {
      const code = raw.charCodeAt(i);
      if (code === 0x26 || code === 0x0d) {
        plain = false;
        break;
      }
    }
    if (plain) return raw;
  }
  let text = raw;
  if (text.indexOf("\r") >= 0) text = text.replace(/\r\n?/g, "\n");
  if (text.indexOf("&") >= 0) text = text.replace(ENTITY, decodeReference);
  return text;
}

/** Whether `code` may appear in an element name (we only need to find where the name ends). */
export function isNameChar(code: number): boolean {
  // Anything but whitespace, `/`, `>` and `=`: names are never followed directly by other characters.
  return code > 0x20 && code !== SLASH && code !== GT && code !== 0x3d;
}

/**
 * Index of the `>` that ends the tag whose attributes start at `from`, skipping quoted attribute values
 * (which may contain `>`); -1 when the tag is not complete in `s`.
 */
export function tagEnd(s: string, from: number): number {
  let p = from;
  const length = s.length;
  while (p < length) {
    const code = s.charCodeAt(p);
    if (code === GT) return p;
    if (code === QUOTE || code === APOSTROPHE) {
      const close = s.indexOf(code === QUOTE ? '"' : "'", p + 1);
      if (close < 0) return -1;
      p = close + 1;
    } else {
      p++;
    }
  }
  return -1;
}

/**
 * The end (index just past) of markup starting with `<!` or `<?` at `lt`: a comment, CDATA section,
 * declaration or processing instruction. -1 when it is not complete in `s`.
 */
export function markupEnd(s: string, lt: number): number {
  if (s.charCodeAt(lt + 1) === QUESTION) {
    const end = s.indexOf("?>", lt + 2);
    return end < 0 ? -1 : end + 2;
  }
  if (s.startsWith("<!--", lt)) {
    const end = s.indexOf("-->", lt + 4);
    return end < 0 ? -1 : end + 3;
  }
  if (s.startsWith("<![CDATA[", lt)) {
    const end = s.indexOf("]]>", lt + 9);
    return end < 0 ? -1 : end + 3;
  }
  // A partial `<!--` or `<![CDATA[` at the end of the buffer cannot be told from a declaration yet.
  if (lt + 9 > s.length) return -1;
  const end = tagEnd(s, lt + 2);
  return end < 0 ? -1 : end + 1;
}

/** True when the markup at `lt` (known to start with `<!`) is a CDATA section. */
export function isCdata(s: string, lt: number): boolean {
  return s.startsWith("<![CDATA[", lt);
}

/** Start of the local part of the name in `s[from, to)`: after its namespace prefix, if any. */
export function localNameStart(s: string, from: number, to: number): number {
  for (let p = to - 1; p >= from; p--) if (s.charCodeAt(p) === COLON) return p + 1;
  return from;
}

/** True when `s[from, to)` is exactly `name`. */
export function nameIs(s: string, from: number, to: number, name: string): boolean {
  return to - from === name.length && s.startsWith(name, from);
}

/**
 * Index of the last `<!` (a comment or CDATA section) in `s`, -1 when there is none. "!" is rare in
 * sheet XML and found by memchr; searching "<!" directly stops at every "<" and costs 15 times more.
 */
export function lastMarkupIndex(s: string): number {
  return s.indexOf("!") < 0 ? -1 : s.lastIndexOf("<!");
}

/**
 * Index of the close tag `</name>` (whitespace allowed before `>`) at or after `from`; -1 when absent
 * (or when it may lie beyond an incomplete comment or CDATA section). `needle` is `</` and the name,
 * with any namespace prefix the open tag had (`</row`, `</x:c`). Comments and CDATA sections may hold
 * a close tag as text, so they are stepped over; `lastMarkup`, the index of the last `<!` in `s` (-1 for
 * none, found once per chunk by the caller), spares that care where there is no such section ahead.
 */
export function findCloseTag(s: string, needle: string, from: number, lastMarkup = -1): number {
  let start = from;
  let at = s.indexOf(needle, start);
  while (at >= 0) {
    if (start <= lastMarkup) {
      const bang = s.indexOf("<!", start);
      if (bang >= 0 && bang < at) {
        const end = markupEnd(s, bang);
        if (end < 0) return -1;
        start = end;
        at = s.indexOf(needle, start);
        continue;
      }
    }
    const after = at + needle.length;
    if (after >= s.length) return -1;
    const code = s.charCodeAt(after);
    if (code === GT || code <= 0x20) return at;
    start = after;
    at = s.indexOf(needle, start);
  }
  return -1;
}

/** `</` and the element name `s[from, to)`, for `findCloseTag`; constant strings for common names. */
export function closeNeedle(s: string, from: number, to: number): string {
  switch (to - from) {
    case 1:
      if (s.startsWith("c", from)) return "</c";
      if (s.startsWith("v", from)) return "</v";
      if (s.startsWith("f", from)) return "</f";
      if (s.startsWith("t", from)) return "</t";
      break;
    case 2:
      if (s.startsWith("si", from)) return "</si";
      if (s.startsWith("is", from)) return "</is";
      break;
    case 3:
      if (s.startsWith("row", from)) return "</row";
      break;
  }
  return `</${s.slice(from, to)}`;
}

/** The value of attribute `name` in the open tag text `s[from, to)`, entity-decoded; undefined if absent. */
export function attributeValue(s: string, from: number, to: number, name: string): string | undefined {
  let p = from;
  while (p < to) {
    const code = s.charCodeAt(p);
    if (code <= 0x20 || code === SLASH) {
      p++;
      continue;
    }
    const eq = s.indexOf("=", p);
    if (eq < 0 || eq >= to) return undefined;
    let q = eq + 1;
    while (q < to && s.charCodeAt(q) <= 0x20) q++;
    const quote = s.charCodeAt(q);
    if (quote !== QUOTE && quote !== APOSTROPHE) return undefined;
    const close = s.indexOf(quote === QUOTE ? '"' : "'", q + 1);
    if (close < 0 || close > to) return undefined;
    let nameEnd = eq;
    while (nameEnd > p && s.charCodeAt(nameEnd - 1) <= 0x20) nameEnd--;
    if (nameIs(s, p, nameEnd, name)) return xmlText(s.slice(q + 1, close));
    p = close + 1;
  }
  return undefined;
}

export const CHAR = { LT, GT, SLASH, BANG, QUESTION, QUOTE, APOSTROPHE } as const;
