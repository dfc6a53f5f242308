/**
 * Files that come with an uploaded sheet, so that rows naming an attachment file (`attachments/inv.pdf`,
 * a path next to the sheet, docs/design.md §3.6) can be paid from the console too:
 *
 * - **several files** beside the sheet: each is stored in the upload's folder, and placed where the
 *   sheet's attachment cells name it when only its name matches (a browser sends file names, not the
 *   folders they were in);
 * - **a `.zip`** of the sheet and its files: unpacked into the upload's folder with its folders, after
 *   every entry is checked (a relative path inside the folder, no link, bounded sizes and count).
 *
 * Intake then checks each named file as for any sheet (a regular file inside the sheet's folder, by its
 * real path). Pure path rules are exported for unit tests.
 */
import { createWriteStream } from "node:fs";
import { copyFile, mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import yauzl from "yauzl";
import { PayoutsError } from "../errors/index.js";
import { openSheet } from "../sheets/index.js";

/** At most this many files in a zip or beside a sheet. */
export const MAX_ATTACHMENT_FILES = 500;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

export class AttachmentUploadError extends PayoutsError {
  override readonly name = "AttachmentUploadError";
  constructor(message: string) {
    super("ATTACHMENTS_UNREADABLE", message, { kind: "invalid-input" });
  }
}

/**
 * A zip entry's or file's name made safe as a path inside the upload folder: forward slashes, each part
 * cleaned to letters, digits, `.`, `-`, `_`, ` `; undefined for what must be skipped or refused
 * (absolute, `..`, hidden files and macOS resource forks).
 */
export function safeRelativePath(name: string): string | undefined {
  const parts = name
    .replaceAll("\\", "/")
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  if (parts.length === 0 || /^[A-Za-z]:$/.test(parts[0]!) || name.startsWith("/")) return undefined;
  if (parts.some((p) => p === ".." || p.startsWith(".") || p === "__MACOSX")) return undefined;
  const cleaned = parts.map((p) => p.replace(/[^\p{L}\p{N}._\- ]+/gu, "_").slice(0, 120));
  return cleaned.join("/");
}

const isSheet = (name: string) => /\.(csv|txt|xlsx)$/i.test(name);

/**
 * Unpacks a zip into `dir`; returns the sheet's path (the one .csv/.xlsx in it) and the other files,
 * relative to the sheet's folder. Refuses links, more than {@link MAX_ATTACHMENT_FILES} files, more than
 * `maxBytes` in all, or a zip without exactly one sheet.
 */
export async function unpackZip(
  zipPath: string,
  dir: string,
  maxBytes: number,
): Promise<{ sheetPath: string; files: string[] }> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(zipPath, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
      err || !z ? reject(new AttachmentUploadError("the .zip cannot be read; make it again")) : resolve(z),
    ),
  );
  const written: string[] = [];
  let total = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", (err) => reject(new AttachmentUploadError(`the .zip is damaged: ${err.message}`)));
      zip.on("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        void (async () => {
          if (entry.fileName.endsWith("/")) return zip.readEntry();
          if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
            throw new AttachmentUploadError(
              `${entry.fileName} in the .zip is a link; put the file itself in it`,
            );
          }
          const relative = safeRelativePath(entry.fileName);
          if (relative === undefined) return zip.readEntry();
          if (written.length >= MAX_ATTACHMENT_FILES) {
            throw new AttachmentUploadError(`the .zip holds more than ${MAX_ATTACHMENT_FILES} files`);
          }
          total += entry.uncompressedSize;
          if (total > maxBytes) {
            throw new AttachmentUploadError(
              `the .zip unpacks to more than ${Math.round(maxBytes / 1048576)} MB`,
            );
          }
          const target = path.join(dir, relative);
          await mkdir(path.dirname(target), { recursive: true });
          const stream = await new Promise<NodeJS.ReadableStream>((res, rej) =>
            zip.openReadStream(entry, (err, s) => (err || !s ? rej(err) : res(s))),
          );
          await pipeline(stream, createWriteStream(target, { flags: "wx" })).catch(
            (err: NodeJS.ErrnoException) => {
              if (err.code !== "EEXIST") throw err;
              throw new AttachmentUploadError(`the .zip holds two files named ${relative}; rename one`);
            },
          );
          written.push(relative);
          zip.readEntry();
        })().catch(reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  const sheets = written.filter(isSheet);
  if (sheets.length !== 1) {
    throw new AttachmentUploadError(
      sheets.length === 0
        ? "the .zip holds no .csv or .xlsx sheet"
        : `the .zip holds ${sheets.length} sheets (${sheets.slice(0, 3).join(", ")}); put one sheet in it`,
    );
  }
  const sheetDir = path.posix.dirname(sheets[0]!);
  const files = written
    .filter((f) => f !== sheets[0])
    .map((f) => (sheetDir === "." ? f : path.posix.relative(sheetDir, f)))
    .filter((f) => !f.startsWith(".."));
  return { sheetPath: path.join(dir, sheets[0]!), files };
}

/**
 * Places files uploaded beside the sheet (stored under their names in its folder) where its attachment
 * cells name them: a cell `attachments/inv.pdf` and an uploaded `inv.pdf` → `attachments/inv.pdf`.
 * Returns the files as they now lie, relative to the sheet's folder.
 */
export async function placeAttachments(
  sheetPath: string,
  uploaded: readonly string[],
  options: { sheet?: string | undefined } = {},
): Promise<string[]> {
  if (uploaded.length === 0) return [];
  const dir = path.dirname(sheetPath);
  const byName = new Map(uploaded.map((f) => [path.posix.basename(f), f]));
  const placed = new Set(uploaded);
  const opened = await openSheet(sheetPath, options.sheet ? { sheet: options.sheet } : {});
  const column = opened.header.columns.find((c) => c.canonical === "attachment");
  for await (const row of opened.rows) {
    const text = column ? row.cells[column.key]?.text.trim() : undefined;
    if (!text || text.startsWith("att_")) continue;
    const relative = safeRelativePath(text);
    if (relative === undefined || placed.has(relative)) continue;
    const file = byName.get(path.posix.basename(relative));
    if (!file) continue;
    const target = path.join(dir, relative);
    if (
      await stat(target).then(
        () => true,
        () => false,
      )
    )
      continue;
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(path.join(dir, file), target);
    placed.add(relative);
  }
  return [...placed].sort();
}
