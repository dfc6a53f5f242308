/**
 * The cross-batch duplicate index on a real Redis (a unique prefix): what it finds, within which
 * window, what it names, that recording is idempotent, and that it stays compact at volume.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DuplicateIndex, type IndexedRow, paymentKeyOf } from "../../../src/duplicates/index.js";
import { connectRedis } from "../../../src/redis/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

const DAY = 86_400_000;
const redis = connectRedis(REDIS_URL);
const prefixes: string[] = [];
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-dup-index-"));
});

afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(redis, prefix);
  redis.disconnect();
  await rm(dataDir, { recursive: true, force: true });
});

function indexAt(clock: { now: number }, label: string, windowDays = 30) {
  const prefix = uniquePrefix(label);
  prefixes.push(prefix);
  return {
    prefix,
    index: new DuplicateIndex({
      redis,
      prefix,
      windowDays,
      dataDir,
      now: () => clock.now,
      paymentIdOf: async (batchId, rowKey) => `pay_${batchId}_${rowKey}`,
    }),
  };
}

function row(n: number, overrides: Partial<IndexedRow> = {}): IndexedRow {
  return {
    rowNumber: n + 1,
    rowKey: `R-${n}`,
    reference: `R-${n}`,
    originatingAccountId: "ops-checking",
    receivingAccountId: `payee-${n}`,
    amount: 1000 + n,
    currency: "USD",
    ...overrides,
  };
}

describe("the duplicate index", () => {
  it("finds the rows of earlier batches that pay the same, naming batch, row, reference and payment", async () => {
    const clock = { now: Date.parse("2026-11-20T10:00:00Z") };
    const { index } = indexAt(clock, "dup-find");
    await index.record("b_first", clock.now - 2 * DAY, [
      row(1),
      row(2, { reference: undefined, rowKey: "#3" }),
    ]);
    await index.record("b_second", clock.now - DAY, [
      row(1, { rowNumber: 9, reference: "tab\there 100%", rowKey: "tab\there 100%" }),
    ]);

    const found = await index.find([paymentKeyOf(row(1)), paymentKeyOf(row(2)), paymentKeyOf(row(5))]);
    expect([...found.keys()].sort()).toEqual([paymentKeyOf(row(1)), paymentKeyOf(row(2))].sort());
    expect(found.get(paymentKeyOf(row(1)))).toEqual([
      {
        batchId: "b_second",
        rowNumber: 9,
        reference: "tab\there 100%",
        paymentId: "pay_b_second_tab\there 100%",
        at: new Date(clock.now - DAY).toISOString(),
      },
      {
        batchId: "b_first",
        rowNumber: 2,
        reference: "R-1",
        paymentId: "pay_b_first_R-1",
        at: new Date(clock.now - 2 * DAY).toISOString(),
      },
    ]);
    // A row without a reference is named by its row number, and its payment found by its row key.
    expect(found.get(paymentKeyOf(row(2)))).toEqual([
      expect.objectContaining({
        batchId: "b_first",
        rowNumber: 3,
        reference: undefined,
        paymentId: "pay_b_first_#3",
      }),
    ]);
  });

  it("finds nothing once the batch is older than the window, to the millisecond", async () => {
    const submitted = Date.parse("2026-10-01T12:00:00Z");
    const clock = { now: submitted };
    const { index } = indexAt(clock, "dup-window", 5);
    await index.record("b_old", submitted, [row(1)]);
    clock.now = submitted + 5 * DAY - 1;
    expect((await index.find([paymentKeyOf(row(1))])).size).toBe(1);
    clock.now = submitted + 5 * DAY;
    expect((await index.find([paymentKeyOf(row(1))])).size).toBe(0);
    // Nor is a batch recorded once it is older than the window.
    expect(await index.record("b_older", submitted - DAY, [row(2)])).toBe(0);
  });

  it("records a row once however often its batch is recorded, also across levels of a busy day", async () => {
    const clock = { now: Date.parse("2026-11-20T10:00:00Z") };
    const { index } = indexAt(clock, "dup-idempotent");
    const first = Array.from({ length: 100 }, (_, n) => row(n));
    await index.record("b_busy", clock.now, first);
    // Enough rows to move the day up a level (16 buckets × 90), then the first rows again.
    await index.record(
      "b_busy",
      clock.now,
      Array.from({ length: 1500 }, (_, n) => row(n + 100)),
    );
    await index.record("b_busy", clock.now, first);
    const found = await index.find([paymentKeyOf(row(0)), paymentKeyOf(row(1599))]);
    expect(found.get(paymentKeyOf(row(0)))).toHaveLength(1);
    expect(found.get(paymentKeyOf(row(1599)))).toHaveLength(1);
  });

  it("keeps the same money of two batches of one day, and two rows of one batch, apart", async () => {
    const clock = { now: Date.parse("2026-11-20T10:00:00Z") };
    const { index } = indexAt(clock, "dup-same-day");
    await index.record("b_am", clock.now - 3_600_000, [row(1), row(1, { rowNumber: 7, reference: "R-1b" })]);
    await index.record("b_pm", clock.now, [row(1, { rowNumber: 4, reference: "R-1c" })]);
    const found = (await index.find([paymentKeyOf(row(1))])).get(paymentKeyOf(row(1))) ?? [];
    expect(found.map((m) => `${m.batchId}/${m.rowNumber}/${m.reference}`).sort()).toEqual([
      "b_am/2/R-1",
      "b_am/7/R-1b",
      "b_pm/4/R-1c",
    ]);
  });

  it("keeps 20,000 rows of a day in compact buckets: under 100 bytes a row", async () => {
    const clock = { now: Date.parse("2026-11-20T10:00:00Z") };
    const { index, prefix } = indexAt(clock, "dup-compact");
    await index.record(
      "b20261120T100000-0a1b2c3d",
      clock.now,
      Array.from({ length: 20_000 }, (_, n) =>
        row(n, { reference: `INV-2026-${String(n).padStart(6, "0")}` }),
      ),
    );
    const keys = await redis.keys(`${prefix}:dup:*`);
    let bytes = 0;
    const encodings = new Set<string>();
    for (const key of keys) {
      bytes += Number(await redis.memory("USAGE", key, "SAMPLES", "0"));
      if ((await redis.type(key)) === "hash" && !key.endsWith(":at"))
        encodings.add(String(await redis.object("ENCODING", key)));
    }
    expect(encodings).toEqual(new Set(["listpack"]));
    expect(bytes / 20_000).toBeLessThan(100);
  });

  it("claims corrected rows of a batch older than the window at the time of the correction, losing nothing", async () => {
    const clock = { now: Date.parse("2026-11-20T10:00:00Z") };
    const { index } = indexAt(clock, "dup-claim-old");
    await index.record("b_recent", clock.now - DAY, [row(1)]);
    const looked = (r: IndexedRow) => ({ row: r, paymentKey: paymentKeyOf(r), earlierInSheet: false });
    // A row of a 40-day-old batch corrected to what b_recent's row 2 pays, and one to new money.
    const old = new Date(clock.now - 40 * DAY).toISOString();
    const [same, fresh] = await index.claimCorrections(
      "b_old",
      old,
      [looked(row(1, { rowNumber: 7, rowKey: "OLD-7", reference: "OLD-7" })), looked(row(50))],
      false,
    );
    expect(same?.map((m) => [m.batchId, m.rowNumber])).toEqual([["b_recent", 2]]);
    expect(fresh).toEqual([]);
    // The new money counts from now, and b_recent's row is still there.
    const found = await index.find([paymentKeyOf(row(50)), paymentKeyOf(row(1))]);
    expect(found.get(paymentKeyOf(row(50)))?.map((m) => [m.batchId, m.rowNumber, m.at])).toEqual([
      ["b_old", 51, new Date(clock.now).toISOString()],
    ]);
    expect(found.get(paymentKeyOf(row(1)))?.map((m) => m.batchId)).toEqual(["b_recent"]);
  });
});
