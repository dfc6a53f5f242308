/**
 * Attachment files named by a sheet: they must be regular files inside the sheet's own folder, judged
 * by their real path, so a sheet can never send the service a file from elsewhere on the machine
 * (`link.pdf -> /etc/passwd`, or `d/passwd` with `d -> /etc`). Intake checks them when it validates;
 * the worker calls `readAttachmentFile` again right before the upload, because the file system may
 * have changed between the two (a file swapped for a link after validation).
 */
import { constants } from "node:fs";
import { type FileHandle, open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { ATTACHMENT_MAX_BYTES } from "../payouts-api/wire-types.js";
import type { ProblemCode } from "./problems.js";

type AttachmentProblemCode = Extract<ProblemCode, `ATTACHMENT_${string}`>;

export type AttachmentVerdict =
  | { ok: true /** The file's real path: what the worker uploads. */; realPath: string }
  | { ok: false; code: AttachmentProblemCode; message: string };

/**
 * Checks the attachment file `file` (a path inside `sheetDir`, as check-row.ts resolved it) on disk:
 * its real path must be the sheet folder's real path plus the same relative path (no symbolic link on
 * the way, not even a linked sub-folder), and it must be a regular file, not empty, within the upload
 * limit. The verdict's `realPath` is what the instruction should name.
 */
export async function checkAttachmentFile(file: string, sheetDir: string): Promise<AttachmentVerdict> {
  const name = path.basename(file);
  const relative = path.relative(path.resolve(sheetDir), path.resolve(file));
  if (
    relative === "" ||
    relative === ".." ||
    relative.startsWith(`..${path.sep}`) ||
    path.isAbsolute(relative)
  ) {
    return refuse("ATTACHMENT_INVALID", `attachment "${name}" is not inside the sheet's folder`);
  }
  let realDir: string;
  try {
    realDir = await realpath(sheetDir);
  } catch {
    return notFound(name);
  }
  return checkRealFile(path.join(realDir, relative), name);
}

/**
 * What the worker calls right before an upload: the same checks on `realPath` (the path intake
 * accepted, which was already the real one), then the content, read through one file handle opened
 * without following a final link and checked to be the very file that was checked.
 */
export async function readAttachmentFile(
  realPath: string,
): Promise<{ ok: true; content: Buffer } | { ok: false; code: AttachmentProblemCode; message: string }> {
  const name = path.basename(realPath);
  const verdict = await checkRealFile(realPath, name);
  if (!verdict.ok) return verdict;
  let handle: FileHandle | undefined;
  try {
    // O_NOFOLLOW: a link put in the file's place after the check fails here (ELOOP) instead of
    // being followed; O_NONBLOCK: a FIFO put there cannot hang the worker.
    handle = await open(realPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const opened = await handle.stat();
    const checked = await stat(realPath);
    if (!opened.isFile() || opened.ino !== checked.ino || opened.dev !== checked.dev) {
      return refuse(
        "ATTACHMENT_LINK",
        `attachment "${name}" changed while it was being read; submit it again`,
      );
    }
    if (opened.size > ATTACHMENT_MAX_BYTES) return tooLarge(name, opened.size);
    return { ok: true, content: await handle.readFile() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return linked(name);
    if (code === "ENOENT") return notFound(name);
    return refuse("ATTACHMENT_NOT_FOUND", `attachment "${name}" cannot be read (${code ?? "error"})`);
  } finally {
    await handle?.close();
  }
}

/** `candidate` is where the file must really be: refused when its real path differs (a link). */
async function checkRealFile(candidate: string, name: string): Promise<AttachmentVerdict> {
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return notFound(name);
  }
  if (real !== candidate) return linked(name);
  try {
    const info = await stat(real);
    if (!info.isFile()) {
      return refuse(
        "ATTACHMENT_NOT_FOUND",
        `attachment "${name}" is not a file (only a regular file can be uploaded)`,
      );
    }
    if (info.size === 0) return refuse("ATTACHMENT_INVALID", `attachment "${name}" is empty`);
    if (info.size > ATTACHMENT_MAX_BYTES) return tooLarge(name, info.size);
    return { ok: true, realPath: real };
  } catch {
    return notFound(name);
  }
}

function linked(name: string): AttachmentVerdict & { ok: false } {
  return refuse(
    "ATTACHMENT_LINK",
    `attachment "${name}" is a symbolic link or lies in a linked folder; put the file itself in the sheet's folder`,
  );
}

function notFound(name: string): AttachmentVerdict & { ok: false } {
  return refuse(
    "ATTACHMENT_NOT_FOUND",
    `attachment file "${name}" was not found next to the sheet; put it in the sheet's folder or use an att_ id`,
  );
}

function tooLarge(name: string, size: number): AttachmentVerdict & { ok: false } {
  return refuse(
    "ATTACHMENT_TOO_LARGE",
    `attachment "${name}" is ${(size / 1048576).toFixed(1)} MiB; at most ${ATTACHMENT_MAX_BYTES / 1048576} MiB can be uploaded`,
  );
}

function refuse(code: AttachmentProblemCode, message: string): AttachmentVerdict & { ok: false } {
  return { ok: false, code, message };
}
