/**
 * What one payment job does, independent of BullMQ (payment-worker.ts wraps it). Delivery is
 * at-least-once and a stalled run may wake up while another worker runs the same job, so every step is
 * safe to repeat and every write that shapes a request is fenced:
 *
 *   1. `loadRun`: read the row; a row that is terminal, has a payment, or moved to another attempt is
 *      done;
 *   2. `adoptEarlierAttempt`: on an operator retry (attempt > 1) a live payment of an earlier attempt
 *      is adopted, not repeated;
 *   3. `attachmentIdFor`: attachment files are uploaded once per batch (the `att_` id is stored);
 *   4. `quoteFor`: an FX row's quote, the stored one while it is fresh enough; a stored quote that
 *      expired before it was ever sent is replaced by a new one;
 *   5. `recordBodyHash`: once a body may be sent under a key, its hash is stored, with a new quote in
 *      the same write: conditionally on the quote, hash and generation the run read (two runs cannot
 *      both store one), so a quote is STORED before it is used and the key is only ever sent with that
 *      same body;
 *   6. `fenceSend`: right before each try leaves (the client calls it after its rate-limit wait, so
 *      a try that waited long for its slot is checked when it really goes), one Lua script checks
 *      atomically that the row is still queued on this attempt and requote generation with this body,
 *      and that the run still holds its job lock; a stalled run that lost its job sends nothing. The
 *      send time is recorded;
 *   7. `send`: POST /payments under the row's Idempotency-Key, then the outcome (see `onCreateFailure`);
 *   8. `recordFailure`: `rejected` for the row's own 4xx, `error` after the last try of a fault whose
 *      outcome is unknown, the job handed back (same key) when our own shutdown cut the request. Both
 *      marks apply only while the row is still `queued`: they never overwrite what reconciliation saw.
 *
 * Which failure is which is decided in one place: `classifyFailure` in payouts-api/retry-policy.ts.
 */
import {
  AnswerMismatchError,
  adoptPayment,
  answerMismatches,
  type BatchRecord,
  type BatchStore,
  isTerminalRowState,
  livePaymentOfAttempts,
  REFERENCE_REUSED,
  type RowRecord,
  referenceReusedMessage,
  type SendFenceOutcome,
  type SentPayment,
  type StoredFxQuote,
} from "../batches/index.js";
import { PayoutsError } from "../errors/index.js";
import type { LogSink } from "../logging/index.js";
import {
  classifyFailure,
  endsRowOnLastTry,
  isFinalForRow,
  PayoutsApiError,
  type PayoutsClient,
} from "../payouts-api/index.js";
import type { Payment } from "../payouts-api/wire-types.js";
import {
  externalIdFor,
  idempotencyKeyFor,
  MetadataLimitError,
  metadataNamesRow,
  paymentMetadataFor,
} from "../row-identity/index.js";
import { createAttachmentUploader } from "./attachment-upload.js";
import { bodyHash, needsFxQuote, paymentBodyFor } from "./payment-body.js";
import type { PaymentRowRef } from "./payment-queue.js";
import { RowOutcomeError } from "./row-outcome-error.js";

export { RowOutcomeError };

/**
 * Our own shutdown cut the run's request (the client was closed): nothing is known about the request
 * and it is nobody's fault. The worker hands the job back to run again under the same key, without
 * using up a try; the row is never marked.
 */
export class HandBackError extends PayoutsError {
  override readonly name = "HandBackError";
  constructor(override readonly cause: unknown) {
    const why = (cause as Error)?.message ?? String(cause);
    super("HANDED_BACK", `handed back for a retry under the same key: ${why}`, {
      kind: "unavailable",
      cause,
    });
  }
}

/** The send fence refused a try (see FENCE_SEND): nothing was sent by it. */
class SendFencedError extends PayoutsError {
  override readonly name = "SendFencedError";
  constructor(readonly fence: Exclude<SendFenceOutcome, "ok">) {
    super("SEND_FENCED", `send fenced off: ${fence}`, { kind: "conflict" });
  }
}

export type ProcessResult =
  | { outcome: "paid"; paymentId: string; how: "created" | "adopted" }
  /** `fenced`: this run lost its job or the row moved on; another run (or nobody) carries on. */
  | { outcome: "skipped"; reason: "missing" | "stale" | "done" | "fenced" | "paused" }
  | { outcome: "rejected" | "error"; code: string };

/** What the worker knows about the run of a job. */
export interface JobRun {
  /** Whether a thrown fault will be retried; on the last try the row is marked `error`. */
  isLastTry: boolean;
  /** The run's BullMQ job lock (key and token), checked by the send fence. Absent outside BullMQ. */
  lock?: { key: string; token: string } | undefined;
}

export interface PaymentProcessorOptions {
  store: BatchStore;
  client: PayoutsClient;
  /** A stored quote expiring within this margin is replaced before a first send. Default 10 000 ms. */
  quoteSafetyMs?: number;
  /** New keys after a refused body, per attempt, before the row is rejected. Default 3. */
  maxRequoteGenerations?: number;
  /**
   * How long after the send fence a request may still reach the service (the client's time-outs and
   * in-call retries, plus a margin): recorded on the row, an operator retry of an `error` row waits
   * until it has passed. Default: the client's own `requestWindowMs`, so the window always matches
   * the time-out and retries of the client that sends; only a test sets it.
   */
  sendWindowMs?: number;
  now?: () => number;
  /**
   * Test hook: awaited right before the send fence (to stall a run exactly there, as a stopped or
   * paused process would). Never set in production.
   */
  beforeSend?: (row: RowRecord) => Promise<void>;
  logger?: LogSink;
}

/** Conditional writes lost to another run before this one re-reads the row and gives up the try. */
const MAX_REREADS = 5;

/** Everything one run knows about the row it pays. */
interface RunContext {
  batch: BatchRecord;
  row: RowRecord;
  externalId: string;
  metadata: Record<string, string>;
  run: JobRun;
}

/**
 * The processor: a closure over the store, the client and the settings, made of small named steps
 * (`loadRun`, `adoptEarlierAttempt`, `quoteFor`, `pay`, `send`, `recordFailure`, ...). It is long
 * only because those steps live inside it, sharing the options without passing them around; each
 * step stays short and is read on its own, in the order the header above lists them.
 */
export function createPaymentProcessor(options: PaymentProcessorOptions) {
  const { store, client } = options;
  const quoteSafetyMs = options.quoteSafetyMs ?? 10_000;
  const maxGenerations = options.maxRequoteGenerations ?? 3;
  const sendWindowMs = options.sendWindowMs ?? client.requestWindowMs;
  const now = options.now ?? Date.now;
  const uploadAttachment = createAttachmentUploader({ store, client });

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

  /** The ledger's payment under `externalId`; a list answer naming another externalId is not it. */
  async function findByExternalId(ctx: RunContext): Promise<Payment | undefined> {
    const page = await client.payments.list({ externalId: ctx.externalId, limit: 1 });
    const payment = page.data[0];
    if (payment && payment.externalId !== ctx.externalId) {
      logMismatch(
        ctx,
        new AnswerMismatchError(
          payment.id,
          answerMismatches(payment, sentOf(ctx)),
          "a look-up by externalId",
        ),
      );
      return undefined;
    }
    return payment;
  }

  function sentOf(ctx: RunContext): SentPayment {
    const i = ctx.row.instruction;
    return {
      externalId: ctx.externalId,
      batchId: ctx.row.batchId,
      rowKey: ctx.row.rowKey,
      attempt: ctx.row.attempt,
      amount: i.amount,
      currency: i.currency,
      originatingAccountId: i.originatingAccountId,
      receivingAccountId: i.receivingAccountId,
    };
  }

  function logMismatch(ctx: RunContext, err: AnswerMismatchError): void {
    const fields = { err, batchId: ctx.row.batchId, rowKey: ctx.row.rowKey, externalId: ctx.externalId };
    const message = "the service's answer names another payment than the row's: not adopted";
    if (options.logger?.error) options.logger.error(fields, message);
    else options.logger?.warn(fields, message);
  }

  /**
   * Our payment (the metadata names this batch and row, and it is what was sent) is adopted; anyone
   * else's under our externalId rejects the row; one that names the row but differs from what was
   * sent is never recorded: the row ends `error` for an operator to look at.
   */
  async function adoptOrReject(ctx: RunContext, payment: Payment): Promise<ProcessResult> {
    if (!metadataNamesRow(payment.metadata, ctx.row.batchId, ctx.row.rowKey)) {
      throw new RowOutcomeError(REFERENCE_REUSED, referenceReusedMessage(ctx.externalId, payment));
    }
    const mismatches = answerMismatches(payment, sentOf(ctx));
    if (mismatches.length > 0) {
      const err = new AnswerMismatchError(
        payment.id,
        mismatches,
        "the ledger's payment under this row's externalId",
      );
      logMismatch(ctx, err);
      throw new RowOutcomeError(err.code, err.message, "error");
    }
    await adoptPayment(store, ctx.row, payment, "adopted our earlier payment");
    return { outcome: "paid", paymentId: payment.id, how: "adopted" };
  }

  /**
   * A create's answer is recorded only when it is the payment that was sent. Any other answer leaves
   * the outcome unknown: the ledger is asked by externalId, and while it shows nothing the job is
   * retried under the same key (the service replays the same create, never a second payment).
   */
  async function adoptAnswer(ctx: RunContext, payment: Payment): Promise<ProcessResult> {
    const mismatches = answerMismatches(payment, sentOf(ctx));
    if (mismatches.length === 0) {
      await adoptPayment(store, ctx.row, payment, "payment created");
      return { outcome: "paid", paymentId: payment.id, how: "created" };
    }
    const err = new AnswerMismatchError(payment.id, mismatches, "the answer to the create");
    logMismatch(ctx, err);
    const ours = await findByExternalId(ctx);
    if (ours) return adoptOrReject(ctx, ours);
    throw err;
  }

  /** Step 1: the row and its batch, or why this job has nothing to do. */
  async function loadRun(
    data: PaymentRowRef,
  ): Promise<{ batch: BatchRecord; row: RowRecord } | { skipped: ProcessResult }> {
    const [batch, row] = await Promise.all([batchOf(data.batchId), store.getRow(data.batchId, data.rowKey)]);
    // A missing batch or row means Redis lost it: `payouts recover` rebuilds and re-enqueues it.
    if (!batch || !row) return { skipped: { outcome: "skipped", reason: "missing" } };
    if (row.attempt !== data.attempt) return { skipped: { outcome: "skipped", reason: "stale" } };
    if (isTerminalRowState(row.state) || row.paymentId) {
      return { skipped: { outcome: "skipped", reason: "done" } };
    }
    return { batch, row };
  }

  function contextOf(batch: BatchRecord, row: RowRecord, run: JobRun): RunContext {
    const externalId = externalIdFor({
      batchId: batch.id,
      rowNumber: row.rowNumber,
      reference: row.instruction.reference,
      attempt: row.attempt,
      fileKey: batch.fileKey,
      contentKey: row.instruction.contentKey,
    });
    let metadata: Record<string, string>;
    try {
      metadata = paymentMetadataFor(
        { batchId: batch.id, rowKey: row.rowKey, attempt: row.attempt },
        row.instruction.metadata,
      );
    } catch (err) {
      if (err instanceof MetadataLimitError) throw new RowOutcomeError(err.code, err.message);
      throw err;
    }
    return { batch, row, externalId, metadata, run };
  }

  /** Step 2: an operator retry of a row whose earlier attempt did pay after all adopts that payment. */
  async function adoptEarlierAttempt(ctx: RunContext): Promise<ProcessResult | undefined> {
    if (ctx.row.attempt <= 1) return undefined;
    const earlier = await livePaymentOfAttempts(client, ctx.batch, ctx.row, ctx.row.attempt - 1);
    if (!earlier) return undefined;
    // E.g. it ended in `error` with its response lost: one row, one payment, ever.
    await adoptPayment(store, ctx.row, earlier, "an earlier attempt's payment exists");
    return { outcome: "paid", paymentId: earlier.id, how: "adopted" };
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

  /** Step 4: the key's quote: the stored one, or a new one (with its note) stored by step 5. */
  async function quoteFor(
    ctx: RunContext,
    generation: number,
    sentUnderThisKey: boolean,
  ): Promise<{ quote: StoredFxQuote; newNote?: string } | undefined> {
    const { row } = ctx;
    const stored = row.quote?.generation === generation ? row.quote : undefined;
    if (!needsFxQuote(row.instruction) || sentUnderThisKey) return stored && { quote: stored };
    if (stored && Date.parse(stored.expiresAt) - now() >= quoteSafetyMs) return { quote: stored };
    return {
      quote: await freshQuote(row, generation),
      newNote: stored ? "fx quote expired before sending; quoted again" : "fx quote stored",
    };
  }

  /**
   * Step 5: records the hash of a body built from state that can change (and the new quote it was
   * built with), before it may be sent. False when another run wrote the row first (re-read it).
   */
  async function recordBodyHash(
    ctx: RunContext,
    hash: string,
    generation: number,
    quoted: { quote: StoredFxQuote; newNote?: string } | undefined,
  ): Promise<boolean> {
    const { row } = ctx;
    const fresh = quoted?.newNote !== undefined;
    const written = await store.changeRow(row.batchId, row.rowKey, {
      expectedAttempt: row.attempt,
      expect: {
        quote: row.quote ?? null,
        requoteGeneration: generation,
        sentBodyHash: row.sentBodyHash ?? null,
        sentGeneration: row.sentGeneration ?? null,
      },
      fields: { ...(fresh ? { quote: quoted.quote } : {}), sentBodyHash: hash, sentGeneration: generation },
      ...(fresh ? { note: quoted.newNote } : {}),
    });
    if (written.outcome !== "ok") return false;
    ctx.row = { ...row, quote: quoted?.quote ?? row.quote, sentBodyHash: hash, sentGeneration: generation };
    return true;
  }

  /** Re-reads the row after another run wrote it; false when it is not this run's to pay any more. */
  async function reread(ctx: RunContext): Promise<boolean> {
    const fresh = await store.getRow(ctx.row.batchId, ctx.row.rowKey);
    if (!fresh || fresh.attempt !== ctx.row.attempt || fresh.state !== "queued" || fresh.paymentId)
      return false;
    ctx.row = fresh;
    return true;
  }

  /** Steps 4–7 for the row's current key, repeated when a refused body needs a new key. */
  async function pay(ctx: RunContext): Promise<ProcessResult> {
    const attachmentId = await uploadAttachment(ctx.batch, ctx.row);
    for (let rereads = 0; ; ) {
      const { row } = ctx;
      const generation = row.requoteGeneration;
      const sentUnderThisKey = row.sentGeneration === generation && row.sentBodyHash !== undefined;
      const quoted = await quoteFor(ctx, generation, sentUnderThisKey);
      const quote = quoted?.quote;
      const body = paymentBodyFor(row.instruction, {
        externalId: ctx.externalId,
        metadata: ctx.metadata,
        attachmentId,
        fxQuoteToken: quote?.quoteToken,
      });
      // Only a body built from state that can change (a quote, an uploaded file's id) needs its hash
      // on record; any other body is a pure function of the archived instruction, and is hashed only
      // when a hash on record must be checked.
      const hashed = quote !== undefined || row.instruction.attachment?.kind === "file";
      const hash = hashed || sentUnderThisKey ? bodyHash(body) : "";
      if (sentUnderThisKey && row.sentBodyHash !== hash) {
        // Never send a key with a different body: stop and let an operator look.
        throw new RowOutcomeError(
          "BODY_CHANGED",
          "the payment body differs from the one already sent under this row's key; not sent again",
          "error",
        );
      }
      // A new quote always comes this way: a quote makes the body hashed, and a key already sent keeps
      // its stored quote (quoteFor). So it is stored, with this hash, before anything is sent.
      if (hashed && !sentUnderThisKey && !(await recordBodyHash(ctx, hash, generation, quoted))) {
        if (++rereads > MAX_REREADS || !(await reread(ctx))) return { outcome: "skipped", reason: "fenced" };
        continue;
      }
      // Step 6, run by the client right before each try leaves (after its rate-limit wait), so the
      // recorded window starts when the request really goes, and an in-call retry is fenced too.
      const fenceSend = async (): Promise<void> => {
        await options.beforeSend?.(ctx.row);
        const sentAt = now();
        const fence = await store.fenceSend(row.batchId, row.rowKey, {
          attempt: row.attempt,
          requoteGeneration: generation,
          bodyHash: hashed ? hash : undefined,
          lock: ctx.run.lock,
          now: sentAt,
          inDoubtUntil: sentAt + sendWindowMs,
        });
        if (fence !== "ok") throw new SendFencedError(fence);
      };
      const key = idempotencyKeyFor(
        { entityId: ctx.batch.entityId, batchId: ctx.batch.id, rowKey: row.rowKey, attempt: row.attempt },
        generation,
      );
      let sent: Awaited<ReturnType<typeof send>>;
      try {
        sent = await send(ctx, body, key, fenceSend);
      } catch (err) {
        if (!(err instanceof SendFencedError)) throw err;
        const { fence } = err;
        if (fence === "paused") {
          // The batch was paused or canceled before this row was ever sent: it stays `queued`, never
          // sent; a resume feeds it again (a new job under the same key), a cancel marks it.
          options.logger?.debug?.({ batchId: row.batchId, rowKey: row.rowKey }, "batch paused: row not sent");
          return { outcome: "skipped", reason: "paused" };
        }
        options.logger?.warn(
          { batchId: row.batchId, rowKey: row.rowKey, fence },
          "send fenced off: not sent",
        );
        if (
          (fence === "requoted" || fence === "body-changed") &&
          ++rereads <= MAX_REREADS &&
          (await reread(ctx))
        )
          continue;
        return { outcome: "skipped", reason: "fenced" };
      }
      if (!("requote" in sent)) return sent;
      if (!(await startRequote(ctx, generation, sent.requote)))
        return { outcome: "skipped", reason: "fenced" };
    }
  }

  /** Step 7: one POST /payments; `requote` (with the refusal) when the key's body was refused for good. */
  async function send(
    ctx: RunContext,
    body: ReturnType<typeof paymentBodyFor>,
    key: string,
    fenceSend: () => Promise<void>,
  ): Promise<ProcessResult | { requote: PayoutsApiError }> {
    let refusal: PayoutsApiError | undefined;
    let payment: Payment | undefined;
    try {
      payment = await client.payments.create(body, { idempotencyKey: key, beforeTry: fenceSend });
    } catch (err) {
      if (!(err instanceof PayoutsApiError)) throw err;
      if (err.code === "DUPLICATE_EXTERNAL_ID") {
        const existing = await findByExternalId(ctx);
        if (!existing) throw err; // the service says it exists; look again on the next try
        return adoptOrReject(ctx, existing);
      }
      if (err.code === "INVALID_RESPONSE") {
        // A 2xx we could not read: the payment may exist. Adopt it if it does, else retry.
        const existing = await findByExternalId(ctx);
        if (existing) return adoptOrReject(ctx, existing);
        throw err;
      }
      if (err.code !== "FX_QUOTE_INVALID" && err.code !== "IDEMPOTENCY_KEY_REUSED") throw err;
      refusal = err;
    }
    if (payment !== undefined) return adoptAnswer(ctx, payment);
    if (refusal === undefined) throw new Error("a create ended with neither an answer nor a refusal");
    // The key's body was refused for good. A payment under an older key may still exist (its
    // response lost): only when the ledger shows none may a new key (and quote) be used.
    const existing = await findByExternalId(ctx);
    if (existing) return adoptOrReject(ctx, existing);
    if (ctx.row.requoteGeneration + 1 > maxGenerations)
      throw new RowOutcomeError(refusal.code, refusal.message);
    return { requote: refusal };
  }

  /** Moves the row to the next requote generation (a new key), conditionally on the one it used. */
  async function startRequote(
    ctx: RunContext,
    generation: number,
    refusal: PayoutsApiError,
  ): Promise<boolean> {
    const bumped = await store.changeRow(ctx.row.batchId, ctx.row.rowKey, {
      expectedAttempt: ctx.row.attempt,
      expect: { requoteGeneration: generation },
      fields: { requoteGeneration: generation + 1, quote: null },
      note: `${refusal.code}: no payment exists; new key (generation ${generation + 1})`,
    });
    if (bumped.outcome !== "ok") return false;
    ctx.row = { ...ctx.row, requoteGeneration: generation + 1, quote: undefined };
    return true;
  }

  /**
   * Step 8: what a failure means for the row. The marks are conditional (the row must still be
   * `queued` on this attempt): a row reconciliation moved on keeps its state.
   */
  async function recordFailure(row: RowRecord, err: unknown, run: JobRun): Promise<ProcessResult> {
    const outcome =
      err instanceof RowOutcomeError
        ? err
        : isFinalForRow(err)
          ? new RowOutcomeError((err as PayoutsApiError).code, (err as PayoutsApiError).message)
          : undefined;
    if (outcome) {
      const marked = await store.changeRow(row.batchId, row.rowKey, {
        expectedAttempt: row.attempt,
        to: outcome.state,
        fields: { errorCode: outcome.code, errorMessage: outcome.message },
        note: `${outcome.state}: ${outcome.code}`,
      });
      if (marked.outcome !== "ok") return { outcome: "skipped", reason: "done" };
      return { outcome: outcome.state, code: outcome.code };
    }
    if (classifyFailure(err) === "shutdown") throw new HandBackError(err);
    if (run.isLastTry && endsRowOnLastTry(err)) await markError(row, err);
    throw err;
  }

  /** Processes one job (see the module comment for the steps). */
  async function process(data: PaymentRowRef, run: JobRun): Promise<ProcessResult> {
    const loaded = await loadRun(data);
    if ("skipped" in loaded) return loaded.skipped;
    try {
      const ctx = contextOf(loaded.batch, loaded.row, run);
      return (await adoptEarlierAttempt(ctx)) ?? (await pay(ctx));
    } catch (err) {
      return recordFailure(loaded.row, err, run);
    }
  }

  /** Marks the row `error` (outcome unknown), only while it is still `queued` on this attempt. */
  async function markError(
    row: Pick<RowRecord, "batchId" | "rowKey" | "attempt">,
    err: unknown,
  ): Promise<void> {
    const code =
      err instanceof PayoutsApiError || err instanceof AnswerMismatchError
        ? err.code
        : err instanceof Error
          ? err.name
          : "ERROR";
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
