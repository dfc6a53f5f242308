/**
 * Attachment files named by path in a sheet: uploaded once per batch (the `att_` id is stored on the
 * batch, the upload carries a key derived from the batch and the path, so a retried upload creates one
 * attachment). The file is checked again right before it is read (intake/attachment-file.ts), since
 * it may have changed since validation.
 */
import path from "node:path";
import type { BatchRecord, BatchStore, RowRecord } from "../batches/index.js";
import { readAttachmentFile } from "../intake/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import { attachmentKeyFor } from "../row-identity/index.js";
import { RowOutcomeError } from "./row-outcome-error.js";

const CONTENT_TYPES: Record<string, string> = {
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".txt": "text/plain",
  ".csv": "text/csv",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

/** Returns the `att_` id a row's payment carries (uploading its file first when needed). */
export function createAttachmentUploader(deps: { store: BatchStore; client: PayoutsClient }) {
  const { store, client } = deps;
  return async function attachmentIdFor(batch: BatchRecord, row: RowRecord): Promise<string | undefined> {
    const attachment = row.instruction.attachment;
    if (!attachment) return undefined;
    if (attachment.kind === "id") return attachment.id;
    const known = await store.attachmentFor(batch.id, attachment.path);
    if (known) return known;
    // The worker's own check of the file it is about to send: the checks intake
    // made, again, on the real path it accepted, and the content read through one handle that cannot
    // follow a link put in the file's place since.
    const read = await readAttachmentFile(attachment.path);
    if (!read.ok) throw new RowOutcomeError(read.code, read.message);
    const content = read.content;
    const uploaded = await client.attachments.create(
      {
        fileName: path.basename(attachment.path),
        contentType: CONTENT_TYPES[path.extname(attachment.path).toLowerCase()] ?? "application/octet-stream",
        contentBase64: content.toString("base64"),
      },
      { idempotencyKey: attachmentKeyFor(batch.entityId, batch.id, attachment.path) },
    );
    return store.rememberAttachment(batch.id, attachment.path, uploaded.id);
  };
}
