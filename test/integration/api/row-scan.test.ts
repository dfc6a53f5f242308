/**
 * Row listings at size, on a real Redis: sheet order from any position, filters and searches matched
 * inside Redis a budget at a time (a cursor goes on where a request stopped), invalid rows by row
 * number, and the HSCAN walk for a batch without a complete order list.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { achInstruction } from "../../../bench/lib/sample-rows.js";
import { rowByNumber } from "../../../src/api/row-views.js";
import {
  amountNeedle,
  BatchStore,
  decodeScanCursor,
  encodeScanCursor,
  type RowState,
  type SubmittedInstruction,
  scanRows,
} from "../../../src/batches/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

const N = 1_200;
let redis: RedisClient;
let store: BatchStore;
let prefix: string;
const batchId = "scan_batch";

/** Row i (0-based) is sheet row i + 2, reference REF-<i>; its amount in cents is 10000 + i. */
function instruction(i: number): SubmittedInstruction {
  const r = achInstruction(i + 2, `REF-${i}`, `REF-${i}`, 10_000 + i);
  return i % 100 === 7 ? { ...r, receivingAccountId: "acct_payee_rare" } : r;
}

beforeAll(async () => {
  prefix = uniquePrefix("row-scan");
  redis = connectRedis(REDIS_URL);
  store = new BatchStore(redis, { prefix });
  await store.createBatch({
    id: batchId,
    fileSha256: "0",
    sourceName: "scan.csv",
    entityId: "me",
    createdAt: new Date().toISOString(),
    rowCount: N,
    invalidCount: 3,
    rowsRecorded: false,
    enqueueComplete: true,
    archivePath: undefined,
    sheet: { columns: [], keys: [], format: "csv" },
  });
  // Recorded out of order in two parts: the order list keeps the order rows were recorded in.
  const rows = Array.from({ length: N }, (_, i) => instruction(i));
  await store.recordRows(batchId, rows);
  await store.recordInvalidRows(batchId, [
    {
      rowNumber: 5000,
      source: { reference: "BAD-3" },
      problems: [{ message: "AMOUNT_ZERO: the amount is 0" }],
    },
    { rowNumber: 1300, source: { reference: "BAD-1" }, problems: [{ message: "AMOUNT_MISSING: no amount" }] },
    { rowNumber: 2000, source: { reference: "BAD-2" }, problems: [{ message: "CURRENCY_UNKNOWN: XYZ" }] },
  ]);
  await store.markRowsRecorded(batchId);
  // A few failed rows far apart, one with a distinctive error code.
  for (const i of [3, 640, 1_150]) {
    await store.changeRow(batchId, `REF-${i}`, {
      to: "rejected" as RowState,
      fields: { errorCode: i === 640 ? "ATTACHMENT_REQUIRED" : "VALIDATION_ERROR", errorMessage: "no" },
    });
  }
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** Follows cursors until the listing ends; the keys of every page, in order. */
async function all(query: Parameters<typeof scanRows>[2]): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let pages = 0;
  let cursor = query.cursor;
  for (;;) {
    const page = await scanRows(store, batchId, { ...query, cursor });
    pages++;
    keys.push(...page.keys);
    if (!page.next) return { keys, pages };
    cursor = page.next;
  }
}

describe("listing a batch's rows", () => {
  it("pages in sheet order from any position, with the listing's size", async () => {
    const first = await scanRows(store, batchId, { limit: 5 });
    expect(first.keys).toEqual(["REF-0", "REF-1", "REF-2", "REF-3", "REF-4"]);
    expect(first).toMatchObject({ mode: "list", offset: 0, size: N });
    const deep = await scanRows(store, batchId, { limit: 3, offset: 1_000 });
    expect(deep.keys).toEqual(["REF-1000", "REF-1001", "REF-1002"]);
    const last = await scanRows(store, batchId, { limit: 10, offset: N - 2 });
    expect(last.keys).toEqual([`REF-${N - 2}`, `REF-${N - 1}`]);
    expect(last.next).toBeNull();
    const next = await scanRows(store, batchId, { limit: 2, cursor: first.next! });
    expect(next.keys).toEqual(["REF-5", "REF-6"]);
  });

  it("filters by state inside Redis, in sheet order, going on where a request's budget ran out", async () => {
    const { keys, pages } = await all({ limit: 50, states: new Set(["rejected"]), budget: 500 });
    expect(keys).toEqual(["REF-3", "REF-640", "REF-1150"]);
    // 1,200 rows at 500 a request: the walk took several requests, each answering a cursor.
    expect(pages).toBeGreaterThanOrEqual(3);
    const from = await scanRows(store, batchId, { limit: 50, states: new Set(["rejected"]), offset: 600 });
    expect(from.keys).toEqual(["REF-640", "REF-1150"]);
  });

  it("searches references, error codes, payees and amounts", async () => {
    expect((await all({ limit: 100, q: "ref-115" })).keys).toEqual([
      "REF-115",
      ...Array.from({ length: 10 }, (_, i) => `REF-${1150 + i}`),
    ]);
    expect((await all({ limit: 100, q: "attachment_req" })).keys).toEqual(["REF-640"]);
    // 100.07 USD is 10007 cents: row 7 (a text search for "100.07" would match nothing recorded).
    expect((await all({ limit: 100, q: "100.07" })).keys).toEqual(["REF-7"]);
    expect((await all({ limit: 100, q: "100.5" })).keys).toEqual(["REF-50"]);
    // A payee found by name is matched by its account id.
    const rare = await all({ limit: 100, q: "zzz-no-text-match", payeeIds: ["acct_payee_rare"] });
    expect(rare.keys).toHaveLength(12);
    expect(rare.keys[0]).toBe("REF-7");
  });

  it("lists the invalid rows by row number and searches them", async () => {
    const page = await scanRows(store, batchId, { limit: 2, invalid: true });
    expect(page).toMatchObject({ mode: "invalid", size: 3, keys: ["1300", "2000"] });
    expect((await scanRows(store, batchId, { limit: 2, invalid: true, cursor: page.next! })).keys).toEqual([
      "5000",
    ]);
    expect((await all({ limit: 10, invalid: true, q: "currency_unknown" })).keys).toEqual(["2000"]);
  });

  it("finds a row by its number, by binary search along the sheet order or by an index without one", async () => {
    for (const n of [2, 3, 600, N, N + 1]) {
      expect((await rowByNumber(store, batchId, n))?.rowKey).toBe(`REF-${n - 2}`);
    }
    expect(await rowByNumber(store, batchId, 1)).toBeUndefined();
    expect(await rowByNumber(store, batchId, N + 2)).toBeUndefined();
    expect(await redis.exists(`${store.keys.batch(batchId)}:api:row-numbers`)).toBe(0);
    const order = store.keys.order(batchId);
    const saved = await redis.lrange(order, 0, -1);
    await redis.ltrim(order, 0, 99);
    try {
      expect((await rowByNumber(store, batchId, 900))?.rowKey).toBe("REF-898");
    } finally {
      await redis.del(order);
      await redis.rpush(order, ...saved);
    }
  });

  it("walks the row hash when the batch has no complete order list", async () => {
    const order = store.keys.order(batchId);
    const saved = await redis.lrange(order, 0, -1);
    await redis.ltrim(order, 0, 99);
    try {
      const { keys } = await all({ limit: 400, states: new Set(["rejected"]), budget: 300 });
      expect(keys.sort()).toEqual(["REF-1150", "REF-3", "REF-640"]);
      const everything = await all({ limit: 500 });
      expect(new Set(everything.keys).size).toBe(N);
    } finally {
      await redis.del(order);
      await redis.rpush(order, ...saved);
    }
  });

  it("reads cursors it gave and refuses others; reads amounts per currency", () => {
    const c = { mode: "list" as const, pos: "1200", skip: 0 };
    expect(decodeScanCursor(encodeScanCursor(c))).toEqual(c);
    expect(decodeScanCursor("bm9wZQ")).toBeUndefined();
    expect(amountNeedle("150.00", ["USD", "JPY"])).toBe(",USD:15000,JPY:150,");
    expect(amountNeedle("1,250.5", ["USD", "JPY"])).toBe(",USD:125050,");
    expect(amountNeedle("abc", ["USD"])).toBeUndefined();
  });
});
