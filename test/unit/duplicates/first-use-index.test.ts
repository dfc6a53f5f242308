import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FirstUseIndex } from "../../../src/duplicates/first-use-index.js";

describe("FirstUseIndex", () => {
  it("answers the first row of a reference seen before, and records new ones", () => {
    const index = new FirstUseIndex();
    expect(index.firstUseOrRecord("INV-1", 2)).toBeUndefined();
    expect(index.firstUseOrRecord("INV-2", 3)).toBeUndefined();
    expect(index.firstUseOrRecord("INV-1", 4)).toBe(2);
    expect(index.firstUseOrRecord("INV-1", 5)).toBe(2);
    expect(index.firstUseOrRecord("inv-1", 6)).toBeUndefined();
    expect(index.size).toBe(3);
  });

  it("keeps non-ASCII references apart and handles long ones", () => {
    const index = new FirstUseIndex();
    const long = "x".repeat(5000);
    expect(index.firstUseOrRecord("Zahlung-ü", 2)).toBeUndefined();
    expect(index.firstUseOrRecord("Zahlung-u", 3)).toBeUndefined();
    expect(index.firstUseOrRecord(long, 4)).toBeUndefined();
    expect(index.firstUseOrRecord(`${long}y`, 5)).toBeUndefined();
    expect(index.firstUseOrRecord("Zahlung-ü", 6)).toBe(2);
    expect(index.firstUseOrRecord(long, 7)).toBe(4);
  });

  it("agrees with a Map on any sequence of references, across growth", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 3000 }), (references) => {
        const index = new FirstUseIndex();
        const map = new Map<string, number>();
        references.forEach((reference, i) => {
          const expected = map.get(reference);
          if (expected === undefined) map.set(reference, i + 2);
          expect(index.firstUseOrRecord(reference, i + 2)).toBe(expected);
        });
        expect(index.size).toBe(map.size);
      }),
      { numRuns: 50 },
    );
  });

  it("counts the uses of a key and keeps the first row's note", () => {
    const index = new FirstUseIndex();
    expect(index.record("k1", 2, "INV-7")).toEqual({ firstRow: 2, firstNote: "INV-7", occurrence: 1 });
    expect(index.record("k2", 3)).toEqual({ firstRow: 3, firstNote: undefined, occurrence: 1 });
    expect(index.record("k1", 4, "INV-9")).toEqual({ firstRow: 2, firstNote: "INV-7", occurrence: 2 });
    expect(index.record("k1", 5)).toEqual({ firstRow: 2, firstNote: "INV-7", occurrence: 3 });
    expect(index.record("k2", 6, "x")).toEqual({ firstRow: 3, firstNote: undefined, occurrence: 2 });
    for (let i = 0; i < 5000; i++) index.record(`many-${i}`, 10 + i, `note-${i}`);
    expect(index.record("many-4321", 9)).toEqual({ firstRow: 4331, firstNote: "note-4321", occurrence: 2 });
    expect(index.record("k1", 7).occurrence).toBe(4);
  });

  it("keeps keys and notes exact across pages, a key longer than a page included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 40 }), fc.option(fc.string({ maxLength: 30 }))), {
          maxLength: 2000,
        }),
        (uses) => {
          // Pages of 32 bytes: most entries end a page, and many do not fit one.
          const index = new FirstUseIndex(32);
          const firsts = new Map<string, { row: number; note: string | undefined; n: number }>();
          uses.forEach(([key, note], i) => {
            const row = i + 2;
            const first = firsts.get(key) ?? { row, note: note ?? undefined, n: 0 };
            first.n++;
            firsts.set(key, first);
            expect(index.record(key, row, note ?? undefined)).toEqual({
              firstRow: first.row,
              // An empty note is kept as none: the first use answers what it was given.
              firstNote: first.n === 1 || first.note !== "" ? first.note : undefined,
              occurrence: first.n,
            });
          });
          expect(index.size).toBe(firsts.size);
        },
      ),
      { numRuns: 50 },
    );
  });
});
