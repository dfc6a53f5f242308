/**
 * Attachment files stay inside the sheet's folder, judged by their real path: a link next to the
 * sheet (`link.pdf -> /etc/passwd`), a path through a linked folder (`d/passwd` with `d -> /etc`), or
 * something that is not a regular file is refused at validation and again right before the upload.
 * Real files and links in a temporary folder.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkAttachmentFile, readAttachmentFile } from "../../../src/intake/attachment-file.js";
import { buildLiveContext } from "../../../src/intake/live-context.js";
import { type IntakeApi, validateSheet } from "../../../src/intake/validate-sheet.js";
import type { Account } from "../../../src/payouts-api/wire-types.js";

const PDF = "%PDF-1.4\n%%EOF\n";
let root: string;
let sheetDir: string;
let outside: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "attachment-file-")));
  sheetDir = path.join(root, "sheets");
  outside = path.join(root, "elsewhere");
  await mkdir(path.join(sheetDir, "attachments"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(sheetDir, "attachments", "invoice.pdf"), PDF);
  await writeFile(path.join(outside, "secret.pdf"), "not for the service\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const inSheet = (...parts: string[]) => path.join(sheetDir, ...parts);

describe("checkAttachmentFile", () => {
  it("accepts a regular file in the sheet's folder and names its real path", async () => {
    expect(await checkAttachmentFile(inSheet("attachments", "invoice.pdf"), sheetDir)).toEqual({
      ok: true,
      realPath: inSheet("attachments", "invoice.pdf"),
    });
  });

  it("refuses a link next to the sheet that points at /etc/passwd", async () => {
    await symlink("/etc/passwd", inSheet("link.pdf"));
    const verdict = await checkAttachmentFile(inSheet("link.pdf"), sheetDir);
    expect(verdict).toMatchObject({ ok: false, code: "ATTACHMENT_LINK" });
    expect(!verdict.ok && verdict.message).toContain('"link.pdf" is a symbolic link');
  });

  it("refuses a path through a linked folder (d/passwd with d -> /etc)", async () => {
    await symlink("/etc", inSheet("d"));
    expect(await checkAttachmentFile(inSheet("d", "passwd"), sheetDir)).toMatchObject({
      ok: false,
      code: "ATTACHMENT_LINK",
    });
  });

  it("refuses a link that stays inside the folder too: only the file itself is uploaded", async () => {
    await symlink(inSheet("attachments", "invoice.pdf"), inSheet("alias.pdf"));
    expect(await checkAttachmentFile(inSheet("alias.pdf"), sheetDir)).toMatchObject({
      ok: false,
      code: "ATTACHMENT_LINK",
    });
  });

  it("refuses a path that climbs out of the folder, even when the file exists", async () => {
    expect(await checkAttachmentFile(path.join(outside, "secret.pdf"), sheetDir)).toMatchObject({
      ok: false,
      code: "ATTACHMENT_INVALID",
    });
  });

  it("refuses a folder, and a missing file", async () => {
    expect(await checkAttachmentFile(inSheet("attachments"), sheetDir)).toMatchObject({
      ok: false,
      code: "ATTACHMENT_NOT_FOUND",
      message: expect.stringContaining("is not a file"),
    });
    expect(await checkAttachmentFile(inSheet("nope.pdf"), sheetDir)).toMatchObject({
      ok: false,
      code: "ATTACHMENT_NOT_FOUND",
    });
  });

  it("follows a link to the sheet's folder itself: the folder is judged by its real path", async () => {
    const linkedSheetDir = path.join(root, "linked-sheets");
    await symlink(sheetDir, linkedSheetDir);
    expect(
      await checkAttachmentFile(path.join(linkedSheetDir, "attachments", "invoice.pdf"), linkedSheetDir),
    ).toEqual({ ok: true, realPath: inSheet("attachments", "invoice.pdf") });
  });
});

describe("readAttachmentFile (the worker's check right before the upload)", () => {
  it("reads a file that is still what validation accepted", async () => {
    const read = await readAttachmentFile(inSheet("attachments", "invoice.pdf"));
    expect(read.ok && read.content.toString()).toBe(PDF);
  });

  it("refuses a file swapped for a link after validation", async () => {
    const file = inSheet("attachments", "invoice.pdf");
    expect((await checkAttachmentFile(file, sheetDir)).ok).toBe(true);
    await unlink(file);
    await symlink("/etc/passwd", file);
    expect(await readAttachmentFile(file)).toMatchObject({ ok: false, code: "ATTACHMENT_LINK" });
  });

  it("refuses a folder swapped for a link to another folder after validation", async () => {
    await rm(inSheet("attachments"), { recursive: true });
    await symlink(outside, inSheet("attachments"));
    await writeFile(path.join(outside, "invoice.pdf"), "someone else's file\n");
    expect(await readAttachmentFile(inSheet("attachments", "invoice.pdf"))).toMatchObject({
      ok: false,
      code: "ATTACHMENT_LINK",
    });
  });
});

describe("validateSheet with linked attachment files", () => {
  const now = "2026-01-01T00:00:00.000Z";
  const accounts: Account[] = [
    { id: "acct_ops", externalId: "ops", ownershipType: "internal", type: "ach", isVerified: true },
    { id: "acct_vendor", externalId: "vendor", ownershipType: "external", type: "ach" },
  ].map((a) => ({ ...a, createdAt: now, updatedAt: now }) as Account);
  const live = buildLiveContext(accounts, {
    capabilities: [{ operation: "payment.domestic:write", allowed: true, reasons: [] }],
  });
  const api: IntakeApi = {
    accounts: {
      listAll: () => {
        throw new Error("live data is given");
      },
    },
    limitations: { get: () => Promise.reject(new Error("live data is given")) },
    tools: { fastPaymentEligibility: () => Promise.reject(new Error("no faster variant in this sheet")) },
  };

  it("makes each row naming a link invalid with ATTACHMENT_LINK, and keeps the real file's row valid", async () => {
    await symlink("/etc/passwd", inSheet("link.pdf"));
    await symlink("/etc", inSheet("d"));
    const sheet = inSheet("payouts.csv");
    await writeFile(
      sheet,
      [
        "reference,from_account,to_account,amount,attachment",
        "A-1,ops,vendor,10.00,link.pdf",
        "A-2,ops,vendor,10.00,d/passwd",
        "A-3,ops,vendor,10.00,attachments/invoice.pdf",
        "",
      ].join("\n"),
    );
    const verdicts: Array<[number, string[], unknown]> = [];
    for await (const v of (await validateSheet(sheet, { api, live })).rows) {
      verdicts.push([
        v.row.rowNumber,
        v.problems.map((p) => `${p.column} ${p.code}`),
        v.instruction?.attachment,
      ]);
    }
    expect(verdicts).toEqual([
      [2, ["attachment ATTACHMENT_LINK"], undefined],
      [3, ["attachment ATTACHMENT_LINK"], undefined],
      [4, [], { kind: "file", path: inSheet("attachments", "invoice.pdf") }],
    ]);
  });
});
