import { describe, expect, it } from "vitest";
import type { RowHead } from "../../../src/batches/index.js";
import {
  creationWindows,
  type DueMark,
  decodeHint,
  encodeHint,
  paymentsBetween,
  planLook,
  secondsToCount,
} from "../../../src/reconcile/index.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

function mark(member: string, hint?: DueMark["hint"]): DueMark {
  return { member, score: "1", hint };
}

function head(rowKey: string, extra: Partial<RowHead> = {}): RowHead {
  return { batchId: "b1", rowKey, state: "submitted", attempt: 1, ...extra } as RowHead;
}

describe("planLook", () => {
  it("places a row that holds its payment and its creation time in a window", () => {
    const plan = planLook([mark("R1")], [head("R1", { paymentId: "pay_1", paymentCreatedAt: iso(T0 + 5) })]);
    expect(plan.placed).toEqual([{ mark: mark("R1"), rowKey: "R1", paymentId: "pay_1", createdMs: T0 + 5 }]);
    expect(plan.singles).toEqual([]);
    expect(plan.settled).toEqual([]);
  });

  it("needs no read when the row already holds a snapshot at least as new as the delivery's change", () => {
    const hint = { paymentId: "pay_1", attempt: 1, occurredAtMs: T0 + 100 };
    const fresh = head("R1", {
      paymentId: "pay_1",
      paymentCreatedAt: iso(T0),
      paymentUpdatedAt: iso(T0 + 100),
    });
    const stale = head("R1", {
      paymentId: "pay_1",
      paymentCreatedAt: iso(T0),
      paymentUpdatedAt: iso(T0 + 99),
    });
    expect(planLook([mark("R1", hint)], [fresh]).settled).toHaveLength(1);
    expect(planLook([mark("R1", hint)], [stale]).placed).toHaveLength(1);
    // A delivery about another payment of the row says nothing about the row's own.
    const other = { ...hint, paymentId: "pay_2" };
    expect(planLook([mark("R1", other)], [fresh]).placed).toHaveLength(1);
  });

  it("reads alone a row that does not know its payment yet (by the delivery's payment id) or its creation time", () => {
    const hint = { paymentId: "pay_9", attempt: 1, occurredAtMs: T0 };
    const plan = planLook([mark("R1", hint), mark("R2")], [head("R1"), head("R2", { paymentId: "pay_2" })]);
    expect(plan.singles.map((s) => s.paymentId)).toEqual(["pay_9", "pay_2"]);
  });

  it("reads nothing for another attempt's payment of a row without one, or a mark naming no row and no payment", () => {
    const older = { paymentId: "pay_old", attempt: 1, occurredAtMs: T0 };
    const plan = planLook([mark("R1", older), mark("gone")], [head("R1", { attempt: 2 }), undefined]);
    expect(plan.settled.map((m) => m.member)).toEqual(["R1", "gone"]);
    // A row this Redis does not hold (a shortened long key): its payment, read alone, names it.
    expect(planLook([mark("gone", older)], [undefined]).singles.map((s) => s.paymentId)).toEqual(["pay_old"]);
  });
});

describe("creation windows", () => {
  const placed = (ms: number[]) =>
    ms.map((createdMs, i) => ({ mark: mark(`R${i}`), rowKey: `R${i}`, paymentId: `pay_${i}`, createdMs }));

  it("estimates payments between two times from the batch's payments per second", () => {
    const perSecond = new Map([
      [T0 / 1000, 100],
      [T0 / 1000 + 1, 100],
    ]);
    expect(paymentsBetween(T0, T0 + 500, perSecond)).toBe(50);
    expect(paymentsBetween(T0 + 500, T0 + 1_500, perSecond)).toBe(100);
    expect(paymentsBetween(T0, T0 + 3_600_000, perSecond)).toBe(Number.POSITIVE_INFINITY);
  });

  it("groups rows few payments apart into one window and splits where many lie between", () => {
    // 100 payments a second for 10 s; marked rows: a dense run, then one far later.
    const perSecond = new Map(Array.from({ length: 10 }, (_, i) => [T0 / 1000 + i, 100] as const));
    const rows = placed([T0, T0 + 10, T0 + 20, T0 + 100, T0 + 9_000]);
    expect(secondsToCount(rows)).toContain(T0 / 1000 + 5);
    const windows = creationWindows(rows, perSecond);
    expect(windows.map((w) => [w.fromMs - T0, w.toMs - T0, w.rows.length])).toEqual([
      [0, 100, 4],
      [9_000, 9_000, 1],
    ]);
  });

  it("merges across a pause of the batch (no payments between), and never splits rows of one millisecond", () => {
    const perSecond = new Map([
      [T0 / 1000, 30],
      [T0 / 1000 + 20, 30],
    ]);
    const windows = creationWindows(placed([T0 + 900, T0 + 20_100, T0 + 20_100]), perSecond);
    expect(windows).toHaveLength(1);
    expect(windows[0]!.rows).toHaveLength(3);
  });

  it("splits a window that grew past about twenty pages, so windows read in parallel", () => {
    // 2,000 marked rows a millisecond apart, 1,000 payments a second: about 2,000 payments.
    const perSecond = new Map([
      [T0 / 1000, 1000],
      [T0 / 1000 + 1, 1000],
    ]);
    const windows = creationWindows(placed(Array.from({ length: 2000 }, (_, i) => T0 + i)), perSecond);
    expect(windows.length).toBeGreaterThanOrEqual(2);
    expect(windows.reduce((n, w) => n + w.rows.length, 0)).toBe(2000);
    for (let i = 1; i < windows.length; i++) expect(windows[i]!.fromMs).toBeGreaterThan(windows[i - 1]!.toMs);
  });
});

describe("look hints", () => {
  it("read back as written, and an unreadable one reads as none", () => {
    const hint = { paymentId: "pay_a|b", attempt: 2, occurredAtMs: T0 };
    expect(decodeHint(encodeHint(hint))).toEqual(hint);
    expect(decodeHint("garbage")).toBeUndefined();
    expect(decodeHint(null)).toBeUndefined();
  });
});
