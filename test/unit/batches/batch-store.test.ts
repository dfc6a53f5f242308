/**
 * The batch store on a real Redis (the row scripts are Lua; ioredis-mock cannot be trusted with them).
 * Every test file uses its own key prefix and deletes its keys afterwards.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BatchFeeder,
  BatchStore,
  DuplicateFileError,
  enqueueQueuedRows,
  ROW_CHUNK,
  type RowEnqueuer,
  type RowJobRequest,
  readInstructionArchive,
  resumeIncompleteBatches,
  rowIdempotencyKey,
  submitBatch,
} from "../../../src/batches/index.js";
import { HISTORY_MAX } from "../../../src/batches/redis-scripts.js";
import { PAYMENT_ID_MARK } from "../../../src/batches/row-fields.js";
import type { Fee } from "../../../src/payouts-api/wire-types.js";
import { idempotencyKeyFor } from "../../../src/row-identity/index.js";
import { deleteKeys, instruction, REDIS_URL, sha, uniquePrefix } from "../../integration/pipeline/helpers.js";

let redis: Redis;
let store: BatchStore;
let prefix: string;
let dataDir: string;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  prefix = uniquePrefix("store");
  store = new BatchStore(redis, { prefix });
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-store-"));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
  await rm(dataDir, { recursive: true, force: true });
});

/** An enqueuer that records jobs, and can be told to crash after some chunks. */
function recordingEnqueuer(failAfterChunks = Number.POSITIVE_INFINITY) {
  const jobs: RowJobRequest[] = [];
  let chunks = 0;
  const enqueuer: RowEnqueuer = {
    // A consumer that takes every job at once: the feed hands it every row.
    backlog: async () => 0,
    async enqueue(batch) {
      if (chunks >= failAfterChunks) throw new Error("simulated crash while enqueueing");
      chunks++;
      jobs.push(...batch);
    },
  };
  return { jobs, enqueuer };
}

async function newBatch(rows = [instruction(), instruction()]) {
  const { enqueuer } = recordingEnqueuer();
  const result = await submitBatch({
    store,
    enqueuer,
    instructions: rows,
    fileSha256: sha(),
    sourceName: "t.csv",
    entityId: "me",
    dataDir,
  });
  return { batchId: result.batchId, rows };
}

describe("row changes", () => {
  it("records a row queued on attempt 1, then moves it forward with history, counts and totals", async () => {
    const { batchId, rows } = await newBatch([instruction({ amount: 1000 }), instruction({ amount: 250 })]);
    const key = rows[0]!.rowKey;
    expect((await store.getRow(batchId, key))?.state).toBe("queued");

    const r = await store.changeRow(batchId, key, {
      expectedAttempt: 1,
      to: "submitted",
      fields: { paymentId: "pay_1", paymentStatus: "scheduled" },
      note: "payment created",
    });
    expect(r).toEqual({ outcome: "ok", previous: "queued", attempt: 1 });
    const row = await store.getRow(batchId, key);
    expect(row).toMatchObject({ state: "submitted", paymentId: "pay_1", attempt: 1 });
    expect(row!.history.map((e) => [e.from, e.to, e.note])).toEqual([
      [null, "queued", "recorded"],
      ["queued", "submitted", "payment created"],
    ]);
    const progress = await store.progress(batchId);
    expect(progress!.counts).toMatchObject({ queued: 1, submitted: 1 });
    expect(progress!.totals.USD).toEqual({ queued: 250, submitted: 1000 });
  });

  it("keeps the latest changes of a row's history in compact lines", async () => {
    const { batchId, rows } = await newBatch();
    const key = rows[0]!.rowKey;
    for (let i = 0; i < HISTORY_MAX + 5; i++)
      await store.changeRow(batchId, key, { note: `look ${i}: a "note"` });
    const row = await store.getRow(batchId, key);
    expect(row!.history).toHaveLength(HISTORY_MAX);
    expect(row!.history.at(-1)).toMatchObject({
      from: "queued",
      to: "queued",
      attempt: 1,
      note: `look ${HISTORY_MAX + 4}: a "note"`,
    });
    expect(row!.history[0]!.note).toBe('look 5: a "note"');
    const rowHash = store.keys.row(batchId, key);
    expect((await redis.hget(rowHash, "history"))!.split("\n")[0]).toMatch(
      /^[0-9a-z]{8} queued queued 1 "look 5/,
    );
    // Times are kept as 8 base-36 characters and read back as ISO.
    expect(row!.history[0]!.at).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(row!.updatedAt).toBe(row!.history.at(-1)!.at);
  });

  it("drops what only sends use once the row's payment is terminal, and keeps it on an error row", async () => {
    const { batchId, rows } = await newBatch([instruction(), instruction(), instruction()]);
    const quote = {
      quoteToken: "fxq_1",
      expiresAt: "2026-01-01T00:05:00.000Z",
      foreignAmount: 100,
      currency: "EUR",
      usdAmount: 110,
      usdToForeignRate: 0.9,
      generation: 0,
    };
    const sendOnly = ["quote", "sentBodyHash", "sentGeneration", "lastSentAt", "inDoubtUntil"];
    const fenced = async (key: string) => {
      await store.changeRow(batchId, key, { fields: { quote, sentBodyHash: "h", sentGeneration: 0 } });
      const fence = { attempt: 1, requoteGeneration: 0, bodyHash: "h", now: 1, inDoubtUntil: 2 };
      expect(await store.fenceSend(batchId, key, fence)).toBe("ok");
    };
    const present = async (key: string) =>
      (await redis.hmget(store.keys.row(batchId, key), ...sendOnly)).filter((v) => v !== null).length;

    const [paid, errored, rejected] = rows.map((r) => r.rowKey) as [string, string, string];
    for (const key of [paid, errored, rejected]) await fenced(key);
    await store.changeRow(batchId, paid, { to: "submitted", fields: { paymentId: "pay_1" } });
    expect(await present(paid)).toBe(5);
    await store.changeRow(batchId, paid, { to: "completed", fields: { paymentStatus: "completed" } });
    expect(await present(paid)).toBe(0);
    expect(await store.getRow(batchId, paid)).toMatchObject({ state: "completed", paymentId: "pay_1" });
    // A requote generation of 0 goes too, and still reads (and is compared) as 0.
    expect(await redis.hexists(store.keys.row(batchId, paid), "requoteGeneration")).toBe(0);
    expect((await store.getRow(batchId, paid))!.requoteGeneration).toBe(0);
    expect(
      (await store.changeRow(batchId, paid, { expect: { requoteGeneration: 0 }, fields: { errorCode: "X" } }))
        .outcome,
    ).toBe("terminal");
    expect(
      (await store.changeRow(batchId, paid, { expect: { requoteGeneration: 1 }, fields: { errorCode: "X" } }))
        .outcome,
    ).toBe("changed");
    // A row whose outcome is unknown keeps its in-doubt window (an operator retry waits for it), and a
    // row given up without a payment keeps everything: neither is a terminal payment.
    await store.changeRow(batchId, errored, { to: "error", fields: { errorCode: "TIMEOUT" } });
    expect(await present(errored)).toBe(5);
    await store.changeRow(batchId, rejected, { to: "rejected", fields: { errorCode: "BAD" } });
    expect(await present(rejected)).toBe(5);
  });

  it("keeps a finished row's fees, payment time and history compact, and reads them back as given", async () => {
    const { batchId, rows } = await newBatch([instruction({ currency: "USD" }), instruction()]);
    const key = rows[0]!.rowKey;
    const id = "pay_690aaed1eedd2c6362ddc687";
    const fees: Fee[] = [
      { type: "rail", amount: 150, currency: "USD", chargeTo: "originator" },
      { type: "fx", amount: 9, currency: "EUR", chargeTo: "receiver" },
    ];
    await store.changeRow(batchId, key, {
      to: "submitted",
      fields: { paymentId: id, paymentStatus: "scheduled" },
      note: `payment created: ${id}`,
    });
    await store.changeRow(batchId, key, {
      to: "completed",
      fields: { paymentId: id, fees, paymentUpdatedAt: "2026-11-24T03:50:21.825Z" },
      note: "reconciled: payment completed",
    });
    const hash = await redis.hgetall(store.keys.row(batchId, key));
    expect(hash.fees).toBe("rail:150:o,fx:9:r:EUR");
    expect(hash.paymentUpdatedAt).toBe(Date.parse("2026-11-24T03:50:21.825Z").toString(36));
    expect(hash.history).not.toContain(id);
    const row = (await store.getRow(batchId, key))!;
    expect(row.fees).toEqual(fees);
    expect(row.paymentUpdatedAt).toBe("2026-11-24T03:50:21.825Z");
    expect(row.history.map((e) => e.note)).toEqual([
      "recorded",
      `payment created: ${id}`,
      "reconciled: payment completed",
    ]);
  });

  it("reads a row's result-line fields alone exactly as the full row has them", async () => {
    const { batchId, rows } = await newBatch([
      instruction({ currency: "EUR", amount: 1234 }),
      instruction(),
      instruction(),
    ]);
    const [paid, failed] = rows.map((r) => r.rowKey);
    await store.changeRow(batchId, paid!, {
      to: "submitted",
      fields: { paymentId: "pay_1", paymentStatus: "scheduled", debitUsd: 1411, fxRate: 1.1432 },
      note: "payment created",
    });
    await store.changeRow(batchId, paid!, { to: "completed", fields: { paymentStatus: "completed" } });
    await store.changeRow(batchId, failed!, {
      to: "error",
      fields: { errorCode: "SERVICE_UNAVAILABLE", errorMessage: "the service answered 503" },
    });
    const keys = [...rows.map((r) => r.rowKey), "NO-SUCH-ROW"];
    const full = await store.rowsPage(batchId, keys);
    const outcomes = await store.rowOutcomesPage(batchId, keys);
    expect(outcomes).toHaveLength(3);
    expect(outcomes).toEqual(
      full.map((row) => ({
        batchId: row.batchId,
        rowKey: row.rowKey,
        rowNumber: row.rowNumber,
        instruction: row.instruction,
        source: row.source,
        state: row.state,
        attempt: row.attempt,
        requoteGeneration: row.requoteGeneration,
        paymentId: row.paymentId,
        paymentStatus: row.paymentStatus,
        debitUsd: row.debitUsd,
        fxRate: row.fxRate,
        errorCode: row.errorCode,
        errorMessage: row.errorMessage,
        updatedAt: row.updatedAt,
      })),
    );
    expect(outcomes[0]).toMatchObject({
      state: "completed",
      paymentId: "pay_1",
      debitUsd: 1411,
      fxRate: 1.1432,
    });
    expect(outcomes[1]).toMatchObject({ state: "error", errorCode: "SERVICE_UNAVAILABLE" });
    expect(outcomes[2]).toMatchObject({ state: "queued", attempt: 1, paymentId: undefined });
  });

  it("reads heads, audit fields and states of many rows in the order asked, across read chunks", async () => {
    // One more row than a read chunk holds, so the last row comes from a second script call.
    const many = Array.from({ length: ROW_CHUNK + 1 }, (_, i) => instruction({ amount: 100 + i }));
    const { batchId, rows } = await newBatch(many);
    const last = rows.at(-1)!.rowKey;
    const first = rows[0]!.rowKey;
    await store.changeRow(batchId, last, {
      to: "submitted",
      fields: {
        paymentId: "pay_last",
        paymentStatus: "pending",
        paymentUpdatedAt: "2026-11-27T06:00:01.000Z",
        paymentCreatedAt: "2026-11-27T06:00:00.000Z",
      },
    });
    // Asked in reverse, with a row the batch does not have in the middle.
    const keys = [...rows.map((r) => r.rowKey).reverse()];
    keys.splice(1, 0, "NO-SUCH-ROW");
    const [heads, states, audited] = await Promise.all([
      store.rowHeads(batchId, keys),
      store.rowStates(batchId, keys),
      store.auditRows(batchId, keys),
    ]);
    expect(heads).toHaveLength(keys.length);
    expect(heads[0]).toEqual({
      batchId,
      rowKey: last,
      state: "submitted",
      attempt: 1,
      paymentId: "pay_last",
      paymentStatus: "pending",
      paymentUpdatedAt: "2026-11-27T06:00:01.000Z",
      paymentCreatedAt: "2026-11-27T06:00:00.000Z",
    });
    expect(heads[1]).toBeUndefined();
    expect(heads.at(-1)).toMatchObject({ rowKey: first, state: "queued", paymentId: undefined });
    expect(states[0]).toEqual({ state: "submitted", attempt: 1 });
    expect(states[1]).toBeUndefined();
    expect(states.at(-1)).toEqual({ state: "queued", attempt: 1 });
    // The audit leaves out what the batch does not have and keeps each row's own instruction.
    expect(audited).toHaveLength(rows.length);
    expect(audited[0]).toMatchObject({
      rowKey: last,
      paymentId: "pay_last",
      instruction: { amount: 100 + ROW_CHUNK },
    });
    expect(audited.at(-1)).toMatchObject({
      rowKey: first,
      rowNumber: rows[0]!.rowNumber,
      instruction: { amount: 100 },
    });
  });

  it("writes the payment id back into the history before the row loses it (a new attempt, another payment)", async () => {
    const { batchId, rows } = await newBatch();
    const key = rows[0]!.rowKey;
    await store.changeRow(batchId, key, {
      to: "submitted",
      fields: { paymentId: "pay_first%1" },
      note: "payment created: pay_first%1",
    });
    // The row's payment replaced (as an error row adopting the service's answer could): old lines keep
    // naming the old payment, the new line the new one.
    await store.changeRow(batchId, key, {
      fields: { paymentId: "pay_second" },
      note: "adopted pay_second (was pay_first%1)",
    });
    await store.changeRow(batchId, key, { to: "failed", fields: { paymentStatus: "failed" } });
    expect((await store.startNewAttempt(batchId, key, 1)).outcome).toBe("ok");
    const row = (await store.getRow(batchId, key))!;
    expect(row.paymentId).toBeUndefined();
    expect(row.history.map((e) => e.note)).toEqual([
      "recorded",
      "payment created: pay_first%1",
      "adopted pay_second (was pay_first%1)",
      null,
      "operator retry",
    ]);
    expect(await redis.hget(store.keys.row(batchId, key), "history")).not.toContain(PAYMENT_ID_MARK);
  });

  it("keeps a payment id with a quote or a backslash exact in the history, across a new attempt", async () => {
    for (const id of ['pay_q"x', "pay_a\\nb", "pay_a/b"]) {
      const { batchId, rows } = await newBatch();
      const key = rows[0]!.rowKey;
      await store.changeRow(batchId, key, {
        to: "submitted",
        fields: { paymentId: id },
        note: `payment created: ${id}`,
      });
      await store.changeRow(batchId, key, { to: "failed", fields: { paymentStatus: "failed" } });
      expect((await store.startNewAttempt(batchId, key, 1)).outcome).toBe("ok");
      expect((await store.getRow(batchId, key))!.history.map((e) => e.note)).toEqual([
        "recorded",
        `payment created: ${id}`,
        null,
        "operator retry",
      ]);
    }
  });

  it("writes an unusual payment id back as JSON into a marked history line", async () => {
    const { batchId, rows } = await newBatch();
    const key = rows[0]!.rowKey;
    const id = 'pay_q"x\\y';
    // A failed row whose history marks its payment id.
    await redis.hset(store.keys.row(batchId, key), {
      state: "failed",
      paymentId: id,
      paymentStatus: "failed",
      history: `mwu5p8sa - queued 1 ~r\nmwu5phik queued submitted 1 ~c${PAYMENT_ID_MARK}\n`,
    });
    expect((await store.getRow(batchId, key))!.history.map((e) => e.note)).toEqual([
      "recorded",
      `payment created: ${id}`,
    ]);
    expect((await store.startNewAttempt(batchId, key, 1)).outcome).toBe("ok");
    const row = (await store.getRow(batchId, key))!;
    expect(row.history.map((e) => e.note).slice(0, 2)).toEqual(["recorded", `payment created: ${id}`]);
    expect(await redis.hget(store.keys.row(batchId, key), "history")).not.toContain(PAYMENT_ID_MARK);
  });

  it("orders payment times by their instant, to the millisecond", async () => {
    const { batchId, rows } = await newBatch([instruction({ currency: "USD" })]);
    const key = rows[0]!.rowKey;
    const rowHash = store.keys.row(batchId, key);
    const id = "pay_690aaed1eedd2c6362ddc687";
    const at = (iso: string) => ({ fields: { paymentId: id, paymentUpdatedAt: iso } });
    expect((await store.changeRow(batchId, key, at("2026-11-24T03:50:21.825Z"))).outcome).toBe("ok");
    expect(await redis.hget(rowHash, "paymentUpdatedAt")).toMatch(/^[0-9a-z]{8}$/);
    expect((await store.getRow(batchId, key))!.paymentUpdatedAt).toBe("2026-11-24T03:50:21.825Z");
    // A snapshot 1 ms older is outdated; the same time or later is not.
    expect((await store.changeRow(batchId, key, at("2026-11-24T03:50:21.824Z"))).outcome).toBe("outdated");
    expect((await store.changeRow(batchId, key, at("2026-11-24T03:50:21.825Z"))).outcome).toBe("ok");
    expect((await store.changeRow(batchId, key, at("2026-11-24T03:50:22.000Z"))).outcome).toBe("ok");
    for (const ms of fc.sample(fc.integer({ min: 1, max: Date.parse("2199-12-31T23:59:59.999Z") }), 100)) {
      await redis.hdel(rowHash, "paymentUpdatedAt");
      expect((await store.changeRow(batchId, key, at(new Date(ms).toISOString()))).outcome).toBe("ok");
      const older = await store.changeRow(batchId, key, at(new Date(ms - 1).toISOString()));
      expect([ms, older.outcome]).toEqual([ms, "outdated"]);
    }
  });

  it("refuses to move backwards or out of a terminal state, and ignores an older attempt's job", async () => {
    const { batchId, rows } = await newBatch();
    const key = rows[0]!.rowKey;
    await store.changeRow(batchId, key, { to: "in-progress" });
    expect((await store.changeRow(batchId, key, { to: "submitted" })).outcome).toBe("refused");
    await store.changeRow(batchId, key, { to: "completed" });
    expect((await store.changeRow(batchId, key, { to: "failed" })).outcome).toBe("refused");
    expect((await store.changeRow(batchId, key, { fields: { errorCode: "X" } })).outcome).toBe("terminal");
    expect((await store.changeRow(batchId, key, { expectedAttempt: 2, to: "completed" })).outcome).toBe(
      "stale",
    );
    expect((await store.changeRow(batchId, "no-such-row", { to: "completed" })).outcome).toBe("missing");
    expect((await store.getRow(batchId, key))?.state).toBe("completed");
  });

  it("starts a new attempt only from failed, canceled, rejected or error rows", async () => {
    const { batchId, rows } = await newBatch();
    const [a, b] = rows.map((r) => r.rowKey) as [string, string];
    await store.changeRow(batchId, a, { to: "rejected", fields: { errorCode: "VALIDATION_ERROR" } });
    await store.changeRow(batchId, b, { to: "submitted", fields: { paymentId: "pay_b" } });

    expect((await store.startNewAttempt(batchId, b, 1)).outcome).toBe("refused");
    expect(await store.startNewAttempt(batchId, a, 1)).toEqual({
      outcome: "ok",
      previous: "rejected",
      attempt: 2,
    });
    const row = await store.getRow(batchId, a);
    expect(row).toMatchObject({ state: "queued", attempt: 2, errorCode: undefined });
    expect((await store.startNewAttempt(batchId, a, 1)).outcome).toBe("stale");
  });

  it("never starts a new attempt for a row whose reference names someone else's payment", async () => {
    const { batchId, rows } = await newBatch();
    const key = rows[0]!.rowKey;
    await store.changeRow(batchId, key, {
      to: "rejected",
      fields: { errorCode: "REFERENCE_REUSED", errorMessage: "already used by pay_old" },
    });
    // A new attempt would send <reference>-r2, a fresh externalId: the old invoice would be paid again.
    expect((await store.startNewAttempt(batchId, key, 1)).outcome).toBe("refused");
    expect(await store.getRow(batchId, key)).toMatchObject({ state: "rejected", attempt: 1 });
  });

  it("keeps an operator's correction when the rows are recorded again (resume, recover)", async () => {
    const { batchId, rows } = await newBatch();
    const original = rows[0]!;
    await store.changeRow(batchId, original.rowKey, { to: "failed" });
    const corrected = { ...original, amount: original.amount + 500 };
    expect(
      (await store.startNewAttemptWithCorrection(batchId, original.rowKey, 1, { instruction: corrected }))
        .outcome,
    ).toBe("ok");
    await store.recordRows(batchId, rows);
    const row = await store.getRow(batchId, original.rowKey);
    expect(row).toMatchObject({ attempt: 2, state: "queued" });
    expect(row?.instruction.amount).toBe(corrected.amount);
  });

  it("keeps concurrent changes consistent: counts always add up to the rows", async () => {
    const rows = Array.from({ length: 50 }, () => instruction());
    const { batchId } = await newBatch(rows);
    await Promise.all(
      rows.flatMap((r) => [
        store.changeRow(batchId, r.rowKey, { to: "submitted" }),
        store.changeRow(batchId, r.rowKey, { to: "in-progress" }),
        store.changeRow(batchId, r.rowKey, { to: "submitted" }),
      ]),
    );
    const progress = await store.progress(batchId);
    const total = Object.values(progress!.counts).reduce((a, b) => a + b, 0);
    expect(total).toBe(50);
    expect(progress!.counts.queued).toBe(0);
  });
});

describe("submitBatch", () => {
  it("records rows first, enqueues one job per row with the row's Idempotency-Key, archives the intent", async () => {
    const rows = [instruction(), instruction()];
    const { jobs, enqueuer } = recordingEnqueuer();
    const result = await submitBatch({
      store,
      enqueuer,
      instructions: rows,
      invalidRows: [{ rowNumber: 9, problems: [{ column: "amount", message: "not a number" }] }],
      fileSha256: sha(),
      sourceName: "march.csv",
      entityId: "ent_acme_corp",
      dataDir,
    });
    expect(result).toMatchObject({ resumed: false, rowCount: 2, invalidCount: 1, enqueued: 2 });
    expect(result.batchId).toMatch(/^b\d{8}T\d{6}-[0-9a-f]{8}$/);
    expect(jobs.map((j) => j.jobId)).toEqual(
      rows.map((r) =>
        idempotencyKeyFor({
          entityId: "ent_acme_corp",
          batchId: result.batchId,
          rowKey: r.rowKey,
          attempt: 1,
        }),
      ),
    );
    const batch = await store.getBatch(result.batchId);
    expect(batch).toMatchObject({ rowsRecorded: true, enqueueComplete: true, sourceName: "march.csv" });
    const firstRow = await store.getRow(result.batchId, rows[0]!.rowKey);
    expect(rowIdempotencyKey(batch!, firstRow!)).toBe(jobs[0]!.jobId);
    expect(await store.invalidRows(result.batchId)).toEqual([
      { rowNumber: 9, source: undefined, problems: [{ column: "amount", message: "not a number" }] },
    ]);
    const archive = await readInstructionArchive(batch!.archivePath!);
    expect(archive.instructions.map((i) => i.rowKey)).toEqual(rows.map((r) => r.rowKey));
  });

  it("refuses the same file content again with DUPLICATE_FILE naming the batch, unless allowed", async () => {
    const fileSha256 = sha();
    const common = {
      store,
      instructions: [instruction()],
      fileSha256,
      sourceName: "a.csv",
      entityId: "me",
      dataDir,
    };
    const first = await submitBatch({ ...common, enqueuer: recordingEnqueuer().enqueuer });
    const again = submitBatch({ ...common, enqueuer: recordingEnqueuer().enqueuer });
    await expect(again).rejects.toThrow(DuplicateFileError);
    await expect(again).rejects.toMatchObject({ code: "DUPLICATE_FILE", existingBatchId: first.batchId });
    const allowed = await submitBatch({
      ...common,
      enqueuer: recordingEnqueuer().enqueuer,
      allowDuplicateFile: true,
    });
    expect(allowed.batchId).not.toBe(first.batchId);
  });

  it("finishes an interrupted submission when the same file comes again: same batch, no row twice", async () => {
    const rows = Array.from({ length: 2500 }, () => instruction());
    const fileSha256 = sha();
    const common = { store, instructions: rows, fileSha256, sourceName: "big.csv", entityId: "me", dataDir };
    const crashing = recordingEnqueuer(1);
    await expect(submitBatch({ ...common, enqueuer: crashing.enqueuer })).rejects.toThrow(/simulated crash/);
    expect(crashing.jobs).toHaveLength(1000);
    const batchId = crashing.jobs[0]!.batchId;
    expect((await store.getBatch(batchId))?.enqueueComplete).toBe(false);
    // One row moved on meanwhile (its job ran): it must not be enqueued again.
    await store.changeRow(batchId, rows[0]!.rowKey, { to: "submitted", fields: { paymentId: "pay_x" } });

    const second = recordingEnqueuer();
    const result = await submitBatch({ ...common, enqueuer: second.enqueuer });
    expect(result).toMatchObject({ batchId, resumed: true });
    // The batch's feed carries on from its cursor: the rows the first try handed over are not handed
    // over again, the others are, each once; the row that moved on is never handed over by the resume.
    const firstKeys = new Set(crashing.jobs.map((j) => j.rowKey));
    expect(second.jobs).toHaveLength(1500);
    expect(second.jobs.some((j) => firstKeys.has(j.rowKey))).toBe(false);
    expect(new Set([...firstKeys, ...second.jobs.map((j) => j.rowKey)]).size).toBe(2500);
    expect(second.jobs.some((j) => j.rowKey === rows[0]!.rowKey)).toBe(false);
    expect((await store.getBatch(batchId))?.enqueueComplete).toBe(true);
    expect((await store.progress(batchId))?.counts).toMatchObject({ queued: 2499, submitted: 1 });
  });

  it("lets a starting worker finish a batch whose rows were never recorded, from its archive", async () => {
    const rows = [instruction(), instruction(), instruction()];
    const crashing: RowEnqueuer = {
      backlog: async () => 0,
      enqueue: async () => {
        throw new Error("simulated crash");
      },
    };
    // Crash before enqueueing; then pretend the rows were never written either.
    await expect(
      submitBatch({
        store,
        enqueuer: crashing,
        instructions: rows,
        fileSha256: sha(),
        sourceName: "x.csv",
        entityId: "me",
        dataDir,
      }),
    ).rejects.toThrow();
    const batchId = (await store.latestBatches(1))[0]?.id;
    expect(await store.batchIdsAwaitingEnqueue()).toContain(batchId);
    await redis.hset(store.keys.batch(batchId!), "rowsRecorded", "0");
    await redis.unlink(store.keys.rows(batchId!), ...rows.map((r) => store.keys.row(batchId!, r.rowKey)));
    const worker = recordingEnqueuer();
    const finished = await resumeIncompleteBatches(store, worker.enqueuer);
    expect(finished).toContain(batchId);
    expect(worker.jobs.filter((j) => j.batchId === batchId).map((j) => j.rowKey)).toEqual(
      expect.arrayContaining(rows.map((r) => r.rowKey)),
    );
    expect(await store.rowKeys(batchId!)).toHaveLength(rows.length);
    expect(await store.batchIdsAwaitingEnqueue()).not.toContain(batchId);
  });
});

describe("the batch feed", () => {
  const submitted = async (rows: ReturnType<typeof instruction>[]) =>
    (
      await submitBatch({
        store,
        enqueuer: recordingEnqueuer().enqueuer,
        instructions: rows,
        fileSha256: sha(),
        sourceName: "feed.csv",
        entityId: "me",
        dataDir,
      })
    ).batchId;

  it("finds rows missing from the order list (a crash between a row's record and its place in it)", async () => {
    const rows = Array.from({ length: 30 }, () => instruction());
    const batchId = await submitted(rows);
    expect(await redis.sismember(store.keys.feeding, batchId)).toBe(0);
    await redis.ltrim(store.keys.order(batchId), 0, 19);
    const again = recordingEnqueuer();
    expect(await enqueueQueuedRows(store, again.enqueuer, (await store.getBatch(batchId))!)).toBe(30);
    expect(new Set(again.jobs.map((j) => j.rowKey))).toEqual(new Set(rows.map((r) => r.rowKey)));
    expect(await redis.sismember(store.keys.feeding, batchId)).toBe(0);
  });

  it("an operator's retry hands over one window and leaves the rest to the workers' feed", async () => {
    const rows = Array.from({ length: 30 }, () => instruction());
    const batchId = await submitted(rows);
    // Workers that take every job at once: a top-up that went on while room was left would hand the
    // whole batch over before the person who retried got an answer.
    const { jobs, enqueuer } = recordingEnqueuer();
    const windowOfTen: RowEnqueuer = { ...enqueuer, window: 10 };
    expect(await enqueueQueuedRows(store, windowOfTen, (await store.getBatch(batchId))!)).toBe(30);
    expect(jobs).toHaveLength(10);
    // The workers' feed loop hands over the rest.
    await new BatchFeeder(store, windowOfTen).topUp();
    expect(new Set(jobs.map((j) => j.rowKey))).toEqual(new Set(rows.map((r) => r.rowKey)));
  });

  it("a feed restarted while a top-up hands rows over is not moved by that top-up: no row is skipped", async () => {
    const rows = Array.from({ length: 30 }, () => instruction());
    const batchId = await submitted(rows);
    // Row 0 fails, and an operator retry (a new attempt, the feed restarted) lands while the next
    // top-up is handing its page over: that top-up read the old cursor and the old row states.
    const first = rows[0]!.rowKey;
    await store.changeRow(batchId, first, { to: "rejected", fields: { errorCode: "X" } });
    const jobs: RowJobRequest[] = [];
    let raced = false;
    const racing: RowEnqueuer = {
      backlog: async () => 0,
      async enqueue(batchJobs) {
        if (!raced) {
          raced = true;
          expect((await store.startNewAttempt(batchId, first, 1)).outcome).toBe("ok");
          await new BatchFeeder(store, racing).startFeed(batchId, { restart: true });
        }
        jobs.push(...batchJobs);
      },
    };
    await new BatchFeeder(store, racing).startFeed(batchId, { restart: true });
    await new BatchFeeder(store, racing).topUp();
    expect(jobs.filter((j) => j.rowKey === first).map((j) => j.attempt)).toEqual([2]);
    expect(new Set(jobs.map((j) => j.rowKey)).size).toBe(30);
  });
});
