/**
 * What one payment job does, independent of BullMQ (payment-worker.ts wraps it). Delivery is
 * at-least-once, so every step is safe to repeat:
 *
 *   1. read the row; a row that is terminal, has a payment, or moved to another attempt is done; on
 *      an operator retry (attempt > 1) a live payment of an earlier attempt is adopted, not repeated;
 *   2. FX row: quote (with its purpose) and STORE the quote before using it; a stored quote that
 *      expired before it was ever sent is replaced; once a body may have been sent under a key, that
 *      key is only ever sent with that same body (the body's hash is stored before sending);
 *   3. attachment files are uploaded once per batch (the `att_` id is stored on the batch);
 *   4. POST /payments under the row's Idempotency-Key, then record the outcome (DESIGN rule 4):
 *      - success → the payment's state; a replayed or looked-up payment of ours is adopted;
 *      - 409 DUPLICATE_EXTERNAL_ID → look the payment up: ours (metadata names batch and row) is
 *        adopted, anyone else's rejects the row as REFERENCE_REUSED naming that payment;
 *      - FX_QUOTE_INVALID / IDEMPOTENCY_KEY_REUSED → look up by externalId; only if no payment exists
 *        a new requote generation (new quote, new key) starts; the externalId still guards it;
 *      - another 4xx caused by the row → `rejected` with its code and message (no retry);
 *      - transport faults, 5xx, 429, IDEMPOTENCY_KEY_IN_PROGRESS → thrown for a retry with the same
 *        key and body; on the last try the row becomes `error` with the cause.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  adoptPayment,
  type BatchRecord,
  type BatchStore,
  isTerminalRowState,
  type RowRecord,
  referenceReusedMessage,
  type StoredFxQuote,
} from "../batches/index.js";
import { isFinalError, isRateLimited, PayoutsApiError, type PayoutsClient } from "../payouts-api/index.js";
import type { Payment } from "../payouts-api/wire-types.js";
import {
  attachmentKeyFor,
  externalIdFor,
  idempotencyKeyFor,
  MetadataLimitError,
  metadataNamesRow,
  paymentMetadataFor,
} from "../row-identity/index.js";
import { bodyHash, needsFxQuote, paymentBodyFor } from "./payment-body.js";
import type { PaymentJobData } from "./payment-queue.js";

/** The row must not be sent: it ends `rejected` (or `error` when `state` says so) with this code. */
export class RowOutcomeError extends Error {
  override readonly name = "RowOutcomeError";
  constructor(
    readonly code: string,
    message: string,
    readonly state: "rejected" | "error" = "rejected",
  ) {
    super(message);
  }
}

export type ProcessResult =
  | { outcome: "paid"; paymentId: string; how: "created" | "adopted" }
  | { outcome: "skipped"; reason: "missing" | "stale" | "done" }
  | { outcome: "rejected" | "error"; code: string };

export interface PaymentProcessorOptions {
  store: BatchStore;
  client: PayoutsClient;
  /** A stored quote expiring within this margin is replaced before a first send. Default 10 000 ms. */
  quoteSafetyMs?: number;
  /** New keys after a refused body, per attempt, before the row is rejected. Default 3. */
  maxRequoteGenerations?: number;
  now?: () => number;
  logger?: { warn(obj: object, msg?: string): void; debug?(obj: object, msg?: string): void };
}

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

/**
 * Not caused by the row although final by HTTP status: an unknown API key, an answer we could not
 * read, or a duplicate externalId whose payment the look-up did not show yet (the payment may exist).
 * Those retry and, on the last try, end in `error`, never `rejected`.
 */
function isFinalForRow(err: PayoutsApiError): boolean {
  if (!isFinalError(err)) return false;
  if (err.status === 401) return false;
  if (err.code === "INVALID_RESPONSE") return false;
  // The service says a payment with our externalId exists but the look-up did not show it yet: it may
  // be our own, still committing. Retrying looks again; rejecting would hide a payment that exists.
  if (err.code === "DUPLICATE_EXTERNAL_ID") return false;
  return true;
}

export function createPaymentProcessor(options: PaymentProcessorOptions) {
  const { store, client } = options;
  const quoteSafetyMs = options.quoteSafetyMs ?? 10_000;
  const maxGenerations = options.maxRequoteGenerations ?? 3;
  const now = options.now ?? Date.now;

  // Batch records are immutable in what the processor reads (id, entity); a small cache saves a read per job.
  const batches = new Map<string, BatchRecord>();
  async function batchOf(batchId: string): Promise<BatchRecord | undefined> {
    const cached = batches.get(batchId);
    if (cached) return cached;
    const batch = await store.getBatch(batchId);
    if (batch) {
      if (batches.size >= 100) batches.delete(batches.keys().next().value as string);
      batches.set(batchId, batch);
    }
    return batch;
  }

  async function findByExternalId(externalId: string): Promise<Payment | undefined> {
    const page = await client.payments.list({ externalId, limit: 1 });
    return page.data[0];
  }

  /** Our payment (the metadata names this batch and row) is adopted; anyone else's rejects the row. */
  async function adoptOrReject(row: RowRecord, externalId: string, payment: Payment): Promise<ProcessResult> {
    if (metadataNamesRow(payment.metadata, row.batchId, row.rowKey)) {
      await adoptPayment(store, row, payment, "adopted our earlier payment");
      return { outcome: "paid", paymentId: payment.id, how: "adopted" };
    }
    throw new RowOutcomeError("REFERENCE_REUSED", referenceReusedMessage(externalId, payment));
  }

  async function attachmentIdFor(batch: BatchRecord, row: RowRecord): Promise<string | undefined> {
    const attachment = row.instruction.attachment;
    if (!attachment) return undefined;
    if (attachment.kind === "id") return attachment.id;
    const known = await store.attachmentFor(batch.id, attachment.path);
    if (known) return known;
    let content: Buffer;
    try {
      content = await readFile(attachment.path);
    } catch (err) {
      throw new RowOutcomeError(
        "ATTACHMENT_UNREADABLE",
        `attachment file ${path.basename(attachment.path)} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
    const uploaded = await client.attachments.create(
      {
        fileName: path.basename(attachment.path),
        contentType: CONTENT_TYPES[path.extname(attachment.path).toLowerCase()] ?? "application/octet-stream",
        contentBase64: content.toString("base64"),
      },
      { idempotencyKey: attachmentKeyFor(batch.entityId, batch.id, attachment.path) },
    );
    return store.rememberAttachment(batch.id, attachment.path, uploaded.id);
  }

  async function freshQuote(row: RowRecord, generation: number): Promise<StoredFxQuote> {
    const i = row.instruction;
    const q = await client.tools.fxQuote({
      receivingAccountId: i.receivingAccountId,
      amount: i.amount,
      currency: i.currency,
      ...(i.purpose ? { purpose: i.purpose } : {}),
    });
    return {
      quoteToken: q.quoteToken,
      expiresAt: q.expiresAt,
      foreignAmount: q.foreignAmount,
      currency: q.currency,
      usdAmount: q.amount,
      usdToForeignRate: q.usdToForeignRate,
      generation,
    };
  }

  /** A payment of an earlier attempt of this row that is not failed or canceled, if the ledger has one. */
  async function earlierLivePayment(batch: BatchRecord, row: RowRecord): Promise<Payment | undefined> {
    for (let attempt = 1; attempt < row.attempt; attempt++) {
      const externalId = externalIdFor({
        batchId: batch.id,
        rowNumber: row.rowNumber,
        reference: row.instruction.reference,
        attempt,
      });
      const payment = await findByExternalId(externalId);
      if (
        payment &&
        metadataNamesRow(payment.metadata, row.batchId, row.rowKey) &&
        payment.status !== "failed" &&
        payment.status !== "canceled"
      ) {
        return payment;
      }
    }
    return undefined;
  }

  /** Sends the row's payment; returns the result or throws (RowOutcomeError, or a fault to retry). */
  async function pay(batch: BatchRecord, initial: RowRecord): Promise<ProcessResult> {
    let row = initial;
    const identity = {
      entityId: batch.entityId,
      batchId: batch.id,
      rowKey: row.rowKey,
      attempt: row.attempt,
    };
    const externalId = externalIdFor({
      batchId: batch.id,
      rowNumber: row.rowNumber,
      reference: row.instruction.reference,
      attempt: row.attempt,
    });
    let metadata: Record<string, string>;
    try {
      metadata = paymentMetadataFor(identity, row.instruction.metadata);
    } catch (err) {
      if (err instanceof MetadataLimitError) throw new RowOutcomeError(err.code, err.message);
      throw err;
    }
    if (row.attempt > 1) {
      const earlier = await earlierLivePayment(batch, row);
      if (earlier) {
        // An operator retry of a row whose earlier attempt did pay after all (e.g. it ended in `error`
        // with its response lost): one row, one payment, ever. Adopt it instead of paying again.
        await adoptPayment(store, row, earlier, "an earlier attempt's payment exists");
        return { outcome: "paid", paymentId: earlier.id, how: "adopted" };
      }
    }
    const attachmentId = await attachmentIdFor(batch, row);

    for (;;) {
      const generation = row.requoteGeneration;
      const key = idempotencyKeyFor(identity, generation);
      const sentUnderThisKey = row.sentGeneration === generation && row.sentBodyHash !== undefined;
      let quote = row.quote?.generation === generation ? row.quote : undefined;
      if (needsFxQuote(row.instruction) && !sentUnderThisKey) {
        if (!quote || Date.parse(quote.expiresAt) - now() < quoteSafetyMs) {
          const replacing = quote !== undefined;
          quote = await freshQuote(row, generation);
          const stored = await store.changeRow(row.batchId, row.rowKey, {
            expectedAttempt: row.attempt,
            fields: { quote },
            note: replacing ? "fx quote expired before sending; quoted again" : "fx quote stored",
          });
          if (stored.outcome !== "ok") return { outcome: "skipped", reason: "stale" };
        }
      }
      const body = paymentBodyFor(row.instruction, {
        externalId,
        metadata,
        attachmentId,
        fxQuoteToken: quote?.quoteToken,
      });
      const hash = bodyHash(body);
      if (sentUnderThisKey) {
        if (row.sentBodyHash !== hash) {
          // Never send a key with a different body: stop and let an operator look.
          throw new RowOutcomeError(
            "BODY_CHANGED",
            "the payment body differs from the one already sent under this row's key; not sent again",
            "error",
          );
        }
      } else if (quote !== undefined || row.instruction.attachment?.kind === "file") {
        // Only a body built from state that can change (a quote, an uploaded file's id) needs its hash
        // on record; any other body is a pure function of the archived instruction, so it cannot
        // differ under its key, and the write is saved (one Redis round trip per row).
        const marked = await store.changeRow(row.batchId, row.rowKey, {
          expectedAttempt: row.attempt,
          fields: { sentBodyHash: hash, sentGeneration: generation },
        });
        if (marked.outcome !== "ok") return { outcome: "skipped", reason: "stale" };
      }

      let refusal: PayoutsApiError;
      try {
        const payment = await client.payments.create(body, { idempotencyKey: key });
        await adoptPayment(store, row, payment, "payment created");
        return { outcome: "paid", paymentId: payment.id, how: "created" };
      } catch (err) {
        if (!(err instanceof PayoutsApiError)) throw err;
        if (err.code === "DUPLICATE_EXTERNAL_ID") {
          const existing = await findByExternalId(externalId);
          if (!existing) throw err; // the service says it exists; look again on the next try
          return adoptOrReject(row, externalId, existing);
        }
        if (err.code === "INVALID_RESPONSE") {
          // A 2xx we could not read: the payment may exist. Adopt it if it does, else retry.
          const existing = await findByExternalId(externalId);
          if (existing) return adoptOrReject(row, externalId, existing);
          throw err;
        }
        if (err.code !== "FX_QUOTE_INVALID" && err.code !== "IDEMPOTENCY_KEY_REUSED") {
          if (isFinalForRow(err)) throw new RowOutcomeError(err.code, err.message);
          throw err;
        }
        refusal = err;
      }

      // The key's body was refused for good. A payment under an older key may still exist (its
      // response lost): only when the ledger shows none may a new key (and quote) be used.
      const existing = await findByExternalId(externalId);
      if (existing) return adoptOrReject(row, externalId, existing);
      if (generation + 1 > maxGenerations) throw new RowOutcomeError(refusal.code, refusal.message);
      const bumped = await store.changeRow(row.batchId, row.rowKey, {
        expectedAttempt: row.attempt,
        fields: { requoteGeneration: generation + 1, quote: null },
        note: `${refusal.code}: no payment exists; new key (generation ${generation + 1})`,
      });
      if (bumped.outcome !== "ok") return { outcome: "skipped", reason: "stale" };
      row = { ...row, requoteGeneration: generation + 1, quote: undefined };
    }
  }

  /**
   * Processes one job. `isLastTry` says whether a thrown fault will be retried; on the last try the
   * row is marked `error` with the cause before the fault is rethrown.
   */
  async function process(data: PaymentJobData, isLastTry: boolean): Promise<ProcessResult> {
    const [batch, row] = await Promise.all([batchOf(data.batchId), store.getRow(data.batchId, data.rowKey)]);
    // A missing batch or row means Redis lost it: `payouts recover` rebuilds and re-enqueues it.
    if (!batch || !row) return { outcome: "skipped", reason: "missing" };
    if (row.attempt !== data.attempt) return { outcome: "skipped", reason: "stale" };
    if (isTerminalRowState(row.state) || row.paymentId) return { outcome: "skipped", reason: "done" };
    try {
      try {
        return await pay(batch, row);
      } catch (err) {
        // A quote or an upload the service refuses because of the row (UNSUPPORTED_CURRENCY, ...).
        if (err instanceof PayoutsApiError && isFinalForRow(err))
          throw new RowOutcomeError(err.code, err.message);
        throw err;
      }
    } catch (err) {
      if (err instanceof RowOutcomeError) {
        await store.changeRow(row.batchId, row.rowKey, {
          expectedAttempt: row.attempt,
          to: err.state,
          fields: { errorCode: err.code, errorMessage: err.message },
          note: `${err.state}: ${err.code}`,
        });
        return { outcome: err.state, code: err.code };
      }
      // A 429 does not use up a try (the worker pauses the queue instead), so it never ends a row.
      if (isLastTry && !isRateLimited(err)) await markError(row, err);
      throw err;
    }
  }

  async function markError(
    row: Pick<RowRecord, "batchId" | "rowKey" | "attempt">,
    err: unknown,
  ): Promise<void> {
    const code = err instanceof PayoutsApiError ? err.code : err instanceof Error ? err.name : "ERROR";
    const message = err instanceof Error ? err.message : String(err);
    await store.changeRow(row.batchId, row.rowKey, {
      expectedAttempt: row.attempt,
      to: "error",
      fields: { errorCode: code, errorMessage: message },
      note: `gave up: ${code}`,
    });
  }

  return { process, markError };
}

export type PaymentProcessor = ReturnType<typeof createPaymentProcessor>;
