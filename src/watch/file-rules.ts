/**
 * Which files in a watched folder are sheets to take (pure). Files that are someone's work in
 * progress are ignored silently (they become sheets later, or vanish); files that can never be a
 * sheet are refused with a message, so the person who dropped them learns why nothing happened.
 */
import path from "node:path";

/** Extensions a payout sheet may have. */
export const SHEET_EXTENSIONS = [".csv", ".xlsx"] as const;

/** Suffixes of files still being written by a copier, a browser or an editor. */
export const PARTIAL_FILE_SUFFIXES = [".tmp", ".part", ".crdownload"] as const;

export type FileVerdict =
  | { kind: "sheet" }
  /** Not ours to touch: left where it is, not even reported. */
  | { kind: "ignore"; reason: string }
  /** Never a sheet: moved to rejected/ with this message. */
  | { kind: "refuse"; reason: string };

/** The verdict for a file name found directly in a watched folder. */
export function classifyFileName(name: string): FileVerdict {
  if (name.startsWith("~$")) return { kind: "ignore", reason: "an Excel lock file" };
  if (name.startsWith(".")) return { kind: "ignore", reason: "a hidden file" };
  const lower = name.toLowerCase();
  const partial = PARTIAL_FILE_SUFFIXES.find((s) => lower.endsWith(s));
  if (partial) return { kind: "ignore", reason: `a partial file (${partial}) still being written` };
  if (!isPlainName(name)) {
    return { kind: "refuse", reason: "the file name is not a plain name inside the folder" };
  }
  const ext = path.extname(lower);
  if (!(SHEET_EXTENSIONS as readonly string[]).includes(ext)) {
    return {
      kind: "refuse",
      reason: `unsupported file type "${ext || "(none)"}": payout sheets must be ${SHEET_EXTENSIONS.join(" or ")}`,
    };
  }
  return { kind: "sheet" };
}

/**
 * A name that stays inside its folder: no separators, no `..`, no control characters (which would
 * also make the log lines and notes about it misleading).
 */
export function isPlainName(name: string): boolean {
  if (name === "" || name === "." || name === "..") return false;
  if (name.includes("/") || name.includes("\\") || name.includes("\0")) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u001f\u007f]/.test(name)) return false;
  return path.basename(name) === name;
}

/** The n-th candidate name for a move that must not overwrite: `pay.csv`, `pay.2.csv`, `pay.3.csv`... */
export function numberedName(name: string, n: number): string {
  if (n <= 1) return name;
  const ext = path.extname(name);
  return `${name.slice(0, name.length - ext.length)}.${n}${ext}`;
}

/** The report name beside a rejected sheet: `pay.csv` → `pay.validation.csv` (xlsx keeps xlsx). */
export function validationReportName(sheetName: string): string {
  const ext = path.extname(sheetName);
  const base = sheetName.slice(0, sheetName.length - ext.length);
  return `${base}.validation${ext.toLowerCase() === ".xlsx" ? ".xlsx" : ".csv"}`;
}

/** The note beside a refused or unreadable file: `pay.csv` → `pay.csv.error.txt`. */
export function errorNoteName(fileName: string): string {
  return `${fileName}.error.txt`;
}

/** How an accepted sheet is kept in archive/: the batch id first, so `ls` groups a batch's files. */
export function archivedSheetName(batchId: string, originalName: string): string {
  return `${batchId}--${originalName}`;
}
