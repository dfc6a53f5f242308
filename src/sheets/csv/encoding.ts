/**
 * Text encoding of CSV files. Pure functions over bytes; the reader streams.
 *
 * Accepted: UTF-8 with or without BOM, UTF-16 LE/BE with BOM (Excel's "Unicode Text"), and, for a file
 * that is not valid UTF-8, windows-1252 (Excel's plain "CSV" on Western Windows) when every byte is a
 * printable windows-1252 character. Anything else is refused: guessing an encoding can turn "Müller"
 * into "MÃ¼ller" silently, and an account id must never be misread.
 */

export type CsvEncoding = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252";

export interface EncodingSniff {
  encoding: CsvEncoding;
  /** Bytes of byte-order mark at the start of the file (skipped when decoding). */
  bomLength: number;
}

/**
 * Decides the encoding from the first bytes (at least 4 KiB when the file is that long): a BOM wins;
 * otherwise UTF-8 is assumed (to be confirmed while decoding). NUL bytes without a BOM mean UTF-16/32
 * without a BOM, which is refused (returns undefined).
 */
export function sniffEncoding(head: Uint8Array): EncodingSniff | undefined {
  const [b0, b1, b2] = head;
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return { encoding: "utf-8", bomLength: 3 };
  if (b0 === 0xff && b1 === 0xfe) return { encoding: "utf-16le", bomLength: 2 };
  if (b0 === 0xfe && b1 === 0xff) return { encoding: "utf-16be", bomLength: 2 };
  if (head.includes(0)) return undefined;
  return { encoding: "utf-8", bomLength: 0 };
}

/** Bytes that windows-1252 leaves undefined, and control characters no spreadsheet text contains. */
function isUnfitWindows1252Byte(byte: number): boolean {
  if (byte === 0x09 || byte === 0x0a || byte === 0x0d) return false;
  if (byte < 0x20 || byte === 0x7f) return true;
  return byte === 0x81 || byte === 0x8d || byte === 0x8f || byte === 0x90 || byte === 0x9d;
}

/** Index of the first byte that cannot be windows-1252 spreadsheet text, or -1 when all bytes fit. */
export function firstUnfitWindows1252Byte(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    if (isUnfitWindows1252Byte(bytes[i] ?? 0)) return i;
  }
  return -1;
}

/** The message for a file we cannot decode: says how to fix it in the tools accounting teams use. */
export const ENCODING_ADVICE =
  'save it as "CSV UTF-8 (Comma delimited)" in Excel, or "Text CSV" with character set "Unicode (UTF-8)" in LibreOffice';
