import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReferenceIndex } from "../../../src/intake/reference-index.js";

describe("ReferenceIndex", () => {
  it("answers the first row of a reference seen before, and records new ones", () => {
    const index = new ReferenceIndex();
    expect(index.firstUseOrRecord("INV-1", 2)).toBeUndefined();
    expect(index.firstUseOrRecord("INV-2", 3)).toBeUndefined();
    expect(index.firstUseOrRecord("INV-1", 4)).toBe(2);
    expect(index.firstUseOrRecord("INV-1", 5)).toBe(2);
    expect(index.firstUseOrRecord("inv-1", 6)).toBeUndefined();
    expect(index.size).toBe(3);
  });

  it("keeps non-ASCII references apart and handles long ones", () => {
    const index = new ReferenceIndex();
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
        const index = new ReferenceIndex();
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
});
