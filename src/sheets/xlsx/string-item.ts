/**
 * The text of a string item: a shared string (`<si>`) or an inline string (`<is>`). Pure, no I/O.
 *
 * Its text is every `<t>` joined, whether bare or inside rich-text runs (`<r><rPr/><t>..</t></r>`),
 * leaving out phonetic guides (`<rPh><t>ヤマダ</t></rPh>`, Japanese Excel): those are reading aids
 * Excel shows above the text, not part of it. exceljs keeps only the last `<t>`, which replaces a name
 * with its reading; hence our own scanner.
 */
import {
  CHAR,
  closeNeedle,
  findCloseTag,
  isCdata,
  isNameChar,
  lastMarkupIndex,
  localNameStart,
  markupEnd,
  nameIs,
  tagEnd,
  xmlText,
} from "./xml-text.js";

/** Text content of an element, `s[from, to)`: entity-decoded text plus CDATA sections, comments dropped. */
export function textContent(s: string, from: number, to: number): string {
  let lt = s.indexOf("<", from);
  if (lt < 0 || lt >= to) return xmlText(s.slice(from, to));
  let text = "";
  let p = from;
  while (lt >= 0 && lt < to) {
    text += xmlText(s.slice(p, lt));
    const end = s.charCodeAt(lt + 1) === CHAR.BANG ? markupEnd(s, lt) : -1;
    // Anything but a comment or CDATA inside a text element is not well formed: skip to its end.
    if (end < 0 || end > to) {
      const gt = tagEnd(s, lt + 1);
      p = gt < 0 || gt >= to ? to : gt + 1;
    } else {
      if (isCdata(s, lt)) text += s.slice(lt + 9, end - 3);
      p = end;
    }
    lt = s.indexOf("<", p);
  }
  if (p < to) text += xmlText(s.slice(p, to));
  return text;
}

/**
 * The text of the string item whose content is `s[from, to)` (between `<si>` and `</si>`, or `<is>`).
 * `lastMarkup`: the index of the last `<!` in `s`, if the caller knows it (see `findCloseTag`).
 */
export function stringItemText(s: string, from: number, to: number, lastMarkup = lastMarkupIndex(s)): string {
  // Fast path, what Excel writes for plain text: <t>text</t> or <t xml:space="preserve">text</t>.
  if (s.startsWith("<t", from)) {
    const afterName = s.charCodeAt(from + 2);
    if (afterName === CHAR.GT || afterName === 0x20) {
      const gt = afterName === CHAR.GT ? from + 2 : tagEnd(s, from + 2);
      if (gt > 0 && gt < to && s.charCodeAt(gt - 1) !== CHAR.SLASH) {
        const close = to - 4;
        if (close > gt && s.startsWith("</t>", close) && s.indexOf("<", gt + 1) === close) {
          return xmlText(s.slice(gt + 1, close));
        }
      }
    }
  }
  let text = "";
  let phonetic = 0;
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
    if (first === CHAR.SLASH) {
      const gt = s.indexOf(">", lt);
      let nameEnd = lt + 2;
      while (nameEnd < to && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
      if (nameIs(s, localNameStart(s, lt + 2, nameEnd), nameEnd, "rPh") && phonetic > 0) phonetic--;
      p = gt < 0 ? to : gt + 1;
      continue;
    }
    let nameEnd = lt + 1;
    while (nameEnd < to && isNameChar(s.charCodeAt(nameEnd))) nameEnd++;
    const gt = tagEnd(s, nameEnd);
    if (gt < 0 || gt >= to) break;
    const selfClosing = s.charCodeAt(gt - 1) === CHAR.SLASH;
    const local = localNameStart(s, lt + 1, nameEnd);
    if (!selfClosing && nameIs(s, local, nameEnd, "rPh")) {
      phonetic++;
    } else if (!selfClosing && nameIs(s, local, nameEnd, "t")) {
      const close = findCloseTag(s, closeNeedle(s, lt + 1, nameEnd), gt + 1, lastMarkup);
      const end = close < 0 || close > to ? to : close;
      if (phonetic === 0) text += textContent(s, gt + 1, end);
      p = end;
      continue;
    }
    p = gt + 1;
  }
  return text;
}
