/**
 * The deterministic identity of one row's payment (docs/design.md §3.1), as pure functions:
 *
 * - the `Idempotency-Key`: UUID v5 over (entity, batch, row key, attempt[, requote generation]); it makes
 *   transport retries safe for 24 hours;
 * - the payment `externalId`: the row's `reference` on attempt 1, `<reference>-r<attempt>` after an
 *   operator retry; for a row without a reference its content key ({@link contentKeyFor}: what the
 *   row pays, normalised, and its occurrence among identical rows), so a re-saved or re-encoded copy
 *   of a paid sheet cannot pay the row again; rows recorded before content keys keep
 *   `<fileKey>-row<rowNumber>` or `<batchId>-row<rowNumber>`; unique per partner forever, so it is
 *   the guard that outlives the key;
 * - the payment metadata: the sheet's `metadata.<key>` columns plus `payouts_batch`, `payouts_row`,
 *   `payouts_attempt`, which let the batch be rebuilt from the ledger (docs/design.md §3.3).
 */
import { hash } from "node:crypto";
import { PayoutsError } from "../errors/index.js";
import { RESERVED_METADATA_KEYS } from "../intake/payout-instruction.js";
import {
  EXTERNAL_ID_MAX,
  EXTERNAL_ID_PATTERN,
  METADATA_KEY_MAX,
  METADATA_MAX_KEYS,
  METADATA_VALUE_MAX,
} from "../payouts-api/wire-types.js";
import { uuidV5 } from "./uuid-v5.js";

/**
 * The project's fixed UUID namespace. Changing it changes every key, so a row resubmitted after the
 * change could not be recognised by its key any more (its externalId would still protect it).
 */
export const PAYOUTS_KEY_NAMESPACE = "3f1c2a8e-6b7d-4e59-9a0c-5d2e8f71b4c6";

export interface RowIdentity {
  /** `ent_...` or `me`: the entity the payment is made for (part of the key, never of the externalId). */
  entityId: string;
  batchId: string;
  /** The row's key within the batch: its reference, else `#<rowNumber>` (see `rowKeyOf`). */
  rowKey: string;
  rowNumber: number;
  reference: string | undefined;
  /** 1 for the first try of a row; an operator retry makes 2, 3, ... */
  attempt: number;
  /** The batch's file key ({@link fileKeyFor}); absent for batches recorded before file keys. */
  fileKey?: string | undefined;
  /** A row without a reference: its content key ({@link contentKeyFor}); absent for rows recorded before. */
  contentKey?: string | undefined;
}

/**
 * What a row pays, as its content key sees it: resolved `acct_` ids (a sheet may name an account by
 * its externalId), the amount in minor units, the currency upper case, the delivery preference as
 * resolved, the texts trimmed, an attachment by its `att_` id or its file's name (not its folder),
 * metadata sorted by key. Nothing of the file's bytes, line ends, column order or format.
 */
export interface RowContent {
  originatingAccountId: string;
  receivingAccountId: string;
  amount: number;
  currency: string;
  deliveryPreference: string;
  payerMemo?: string | undefined;
  recipientNote?: string | undefined;
  purpose?: string | undefined;
  attachment?: { kind: "id"; id: string } | { kind: "file"; path: string } | undefined;
  metadata: Readonly<Record<string, string>>;
}

/**
 * The identity of a row without a reference: `c`, 20 hex digits of the sha256 of its normalised
 * content, `-` and its occurrence (1, 2, ...) among the sheet's rows with the same content. The same
 * rows saved again (CRLF or LF, XLSX or CSV, columns in another order) get the same keys, so their
 * externalIds are ones the service already holds and nothing is paid twice; two identical rows of one
 * sheet stay two payments.
 */
export function contentKeyFor(content: RowContent, occurrence: number): string {
  if (!Number.isInteger(occurrence) || occurrence < 1)
    throw new RangeError("occurrence must be an integer >= 1");
  const attachment = content.attachment;
  const parts = [
    "row-content",
    content.originatingAccountId,
    content.receivingAccountId,
    content.amount,
    content.currency.toUpperCase(),
    content.deliveryPreference,
    content.payerMemo?.trim() ?? "",
    content.recipientNote?.trim() ?? "",
    content.purpose?.trim() ?? "",
    attachment === undefined
      ? ""
      : attachment.kind === "id"
        ? attachment.id
        : `file:${fileNameOf(attachment.path)}`,
    Object.entries(content.metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ];
  return `c${shortHash(JSON.stringify(parts), 20)}-${occurrence}`;
}

function fileNameOf(filePath: string): string {
  return filePath.split(/[\\/]/).pop() ?? filePath;
}

/**
 * The identity of a sheet's content for rows without a reference: `f` and 20 hex digits of the file's
 * sha256. The same file submitted again (even after Redis lost every record, or with
 * `--allow-duplicate-file`) gives its rows the same externalIds, which the service refuses to pay twice.
 */
export function fileKeyFor(fileSha256: string): string {
  const hex = /^[0-9a-f]{20,}$/i.test(fileSha256) ? fileSha256 : shortHash(fileSha256, 20);
  return `f${hex.slice(0, 20).toLowerCase()}`;
}

/** A batch id's characters, as regular-expression source, for patterns that embed one (file names, cursors). */
export const BATCH_ID_SOURCE = "[A-Za-z0-9_-]{1,64}";

/**
 * A batch id is safe as an externalId part, a Redis key part and a BullMQ job id part: the characters
 * of {@link BATCH_ID_SOURCE}, not digits only (BullMQ reads a digits-only job id as a number).
 */
export const BATCH_ID_PATTERN = new RegExp(`^(?!\\d+$)${BATCH_ID_SOURCE}$`);

export function assertBatchId(batchId: string): void {
  if (!BATCH_ID_PATTERN.test(batchId)) {
    throw new RangeError(
      `batch id ${JSON.stringify(batchId)} must be 1-64 letters, digits, - or _, not digits only`,
    );
  }
}

function assertAttempt(attempt: number): void {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be an integer >= 1`);
}

/**
 * The Idempotency-Key of one POST /payments of the row. `requoteGeneration` > 0 only after the
 * service refused a body for good under the previous key (expired FX quote, key reused with another
 * body) and a look-up showed no payment exists: a new body then needs a new key.
 */
export function idempotencyKeyFor(
  identity: Pick<RowIdentity, "entityId" | "batchId" | "rowKey" | "attempt">,
  requoteGeneration = 0,
): string {
  assertBatchId(identity.batchId);
  assertAttempt(identity.attempt);
  if (!Number.isInteger(requoteGeneration) || requoteGeneration < 0) {
    throw new RangeError("requoteGeneration must be an integer >= 0");
  }
  // A JSON array is an unambiguous encoding: no choice of row key can make two identities collide.
  const parts: (string | number)[] = [
    "payment",
    identity.entityId,
    identity.batchId,
    identity.rowKey,
    identity.attempt,
  ];
  if (requoteGeneration > 0) parts.push(requoteGeneration);
  return uuidV5(JSON.stringify(parts), PAYOUTS_KEY_NAMESPACE);
}

/** The key an attachment file of a batch is uploaded under, so a retried upload creates one attachment. */
export function attachmentKeyFor(entityId: string, batchId: string, filePath: string): string {
  return uuidV5(JSON.stringify(["attachment", entityId, batchId, filePath]), PAYOUTS_KEY_NAMESPACE);
}

function shortHash(text: string, hexChars: number): string {
  return hash("sha256", text, "hex").slice(0, hexChars);
}

/**
 * Fits `base + suffix` into `max` characters. Too long a base is cut and marked with a hash of the
 * whole base, so two long bases that share a prefix still give different results.
 */
function fitWithSuffix(base: string, suffix: string, max: number): string {
  if (base.length + suffix.length <= max) return base + suffix;
  const hash = shortHash(base, 12);
  return `${base.slice(0, max - suffix.length - hash.length - 1)}-${hash}${suffix}`;
}

/** The payment `externalId` of the row's attempt: always within the spec's pattern and length. */
export function externalIdFor(
  identity: Pick<RowIdentity, "batchId" | "rowNumber" | "reference" | "attempt" | "fileKey" | "contentKey">,
): string {
  assertBatchId(identity.batchId);
  assertAttempt(identity.attempt);
  const suffix = identity.attempt === 1 ? "" : `-r${identity.attempt}`;
  const reference = identity.reference;
  let base: string;
  if (reference !== undefined && reference.length > 0) {
    if (!EXTERNAL_ID_PATTERN.test(reference)) {
      throw new RangeError(
        `reference ${JSON.stringify(reference)} is not a valid externalId (letters, digits, - and _)`,
      );
    }
    base = reference;
  } else {
    if (!Number.isInteger(identity.rowNumber) || identity.rowNumber < 1) {
      throw new RangeError("rowNumber must be an integer >= 1");
    }
    base = identity.contentKey ?? `${identity.fileKey ?? identity.batchId}-row${identity.rowNumber}`;
  }
  return fitWithSuffix(base, suffix, EXTERNAL_ID_MAX);
}

/**
 * The `payouts_row` metadata value of a row key: the key itself, or when it is longer than a metadata
 * value may be, a deterministic shortened form (adoption compares with this same function).
 */
export function rowMetadataValue(rowKey: string): string {
  if (rowKey.length <= METADATA_VALUE_MAX) return rowKey;
  return fitWithSuffix(rowKey, "", METADATA_VALUE_MAX);
}

/** A row whose metadata breaks the spec's limits; `code` is the row's result `error_code`. */
export class MetadataLimitError extends PayoutsError {
  override readonly name = "MetadataLimitError";
  constructor(message: string) {
    super("METADATA_LIMIT", message, { kind: "invalid-input" });
  }
}

/**
 * The payment metadata of the row's attempt. Throws {@link MetadataLimitError} when the sheet's own
 * columns break the spec's limits together with the three keys the pipeline adds (intake should have
 * refused such a row; this is the last line of defence before a 400).
 */
export function paymentMetadataFor(
  identity: Pick<RowIdentity, "batchId" | "rowKey" | "attempt">,
  sheetMetadata: Readonly<Record<string, string>>,
): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(sheetMetadata)) {
    if ((RESERVED_METADATA_KEYS as readonly string[]).includes(key)) {
      throw new MetadataLimitError(`metadata key ${key} is reserved for the pipeline`);
    }
    if (key.length < 1 || key.length > METADATA_KEY_MAX || key.includes("[") || key.includes("]")) {
      throw new MetadataLimitError(
        `metadata key ${JSON.stringify(key)} must be 1-${METADATA_KEY_MAX} characters without [ or ]`,
      );
    }
    if (value.length > METADATA_VALUE_MAX) {
      throw new MetadataLimitError(`metadata.${key} is longer than ${METADATA_VALUE_MAX} characters`);
    }
    metadata[key] = value;
  }
  const reserved = RESERVED_METADATA_KEYS.length;
  if (Object.keys(metadata).length + reserved > METADATA_MAX_KEYS) {
    throw new MetadataLimitError(
      `at most ${METADATA_MAX_KEYS - reserved} metadata columns (the pipeline adds ${reserved} keys of its own)`,
    );
  }
  metadata.payouts_batch = identity.batchId;
  metadata.payouts_row = rowMetadataValue(identity.rowKey);
  metadata.payouts_attempt = String(identity.attempt);
  return metadata;
}

/** True when a payment's metadata says it was made for this batch and row (any attempt). */
export function metadataNamesRow(
  metadata: Readonly<Record<string, string>> | undefined,
  batchId: string,
  rowKey: string,
): boolean {
  return metadata?.payouts_batch === batchId && metadata?.payouts_row === rowMetadataValue(rowKey);
}
