/**
 * The building blocks of the columnar payment store: the string table must give back every string
 * exactly (wide characters, empty strings, across growth), and payment ids must be unique, decode to
 * their slot, and refuse ids this store never issued.
 */
import { describe, expect, it } from "vitest";
import { PaymentIds } from "../src/payment-ids.js";
import { SlotList, StringTable } from "../src/string-table.js";

describe("StringTable", () => {
  it("interns each distinct string once and gives it back exactly, across growth", () => {
    const table = new StringTable();
    const strings = ["", "a", "é", "ünïcödé ✓", "😀 emoji", "x".repeat(5000)];
    for (let i = 0; i < 20_000; i++) strings.push(`row-${i}`, `batch-${i % 7}`);
    const ids = strings.map((s) => table.intern(s));
    expect(table.size).toBe(6 + 20_000 + 7);
    strings.forEach((s, i) => {
      expect(table.get(ids[i] as number)).toBe(s);
      expect(table.find(s)).toBe(ids[i]);
      expect(table.intern(s)).toBe(ids[i]);
    });
    expect(table.find("row-20000")).toBe(-1);
    expect(table.find("😀 emojI")).toBe(-1);
  });
});

describe("SlotList", () => {
  it("still takes slots after being retained down to nothing, or made with no room", () => {
    const list = new SlotList(64);
    for (let i = 0; i < 40; i++) list.push(i);
    list.retain(() => false);
    for (let i = 0; i < 10; i++) list.push(100 + i);
    expect(Array.from({ length: list.length }, (_, i) => list.at(i))).toEqual(
      Array.from({ length: 10 }, (_, i) => 100 + i),
    );
    const empty = new SlotList(0);
    empty.push(7);
    empty.insertAt(0, 6);
    expect([empty.length, empty.at(0), empty.at(1)]).toEqual([2, 6, 7]);
  });

  it("inserts, removes and retains in order", () => {
    const list = new SlotList(1);
    for (let i = 0; i < 100; i += 2) list.push(i);
    list.insertAt(1, 1);
    list.removeAt(0);
    expect(list.length).toBe(50);
    expect([list.at(0), list.at(1), list.at(49)]).toEqual([1, 2, 98]);
    list.retain((s) => s % 4 === 0);
    // 0 was removed: 4, 8, … 96.
    expect(Array.from({ length: list.length }, (_, i) => list.at(i))).toEqual(
      Array.from({ length: 24 }, (_, i) => (i + 1) * 4),
    );
  });
});

describe("PaymentIds", () => {
  it("issues unique pay_ ids of 24 hex characters that decode to their slot", () => {
    const ids = new PaymentIds();
    const seen = new Set<string>();
    for (const slot of [0, 1, 2, 3, 255, 256, 65_535, 1_000_000, 2 ** 31 - 1]) {
      const id = ids.encode(slot);
      expect(id).toMatch(/^pay_[0-9a-f]{24}$/);
      expect(ids.decode(id)).toBe(slot);
      seen.add(id);
    }
    for (let slot = 0; slot < 50_000; slot++) seen.add(ids.encode(slot));
    // The slots above 50,000 (65,535, 1,000,000 and 2^31 - 1) add three more.
    expect(seen.size).toBe(50_000 + 3);
  });

  it("refuses ids it did not issue: another store's, malformed, upper case", () => {
    const ids = new PaymentIds();
    const other = new PaymentIds();
    const id = ids.encode(42);
    expect(other.decode(id)).toBe(-1);
    expect(ids.decode(id.toUpperCase().replace("PAY_", "pay_"))).toBe(-1);
    expect(ids.decode(`${id}0`)).toBe(-1);
    expect(ids.decode(id.slice(0, -1))).toBe(-1);
    expect(ids.decode("pay_000000000000000000000000")).toBe(-1);
    expect(ids.decode(`acct_${id.slice(4)}`)).toBe(-1);
    // Changing one character makes it another (unknown) id.
    const last = id.at(-1) === "0" ? "1" : "0";
    expect(ids.decode(`${id.slice(0, -1)}${last}`)).toBe(-1);
  });
});
