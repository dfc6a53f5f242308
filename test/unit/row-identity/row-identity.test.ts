import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GENERATED_BATCH_ID_SOURCE, newBatchId } from "../../../src/batches/index.js";
import {
  EXTERNAL_ID_MAX,
  EXTERNAL_ID_PATTERN,
  METADATA_VALUE_MAX,
  Metadata,
} from "../../../src/payouts-api/wire-types.js";
import {
  BATCH_ID_PATTERN,
  BATCH_ID_SOURCE,
  externalIdFor,
  idempotencyKeyFor,
  MetadataLimitError,
  metadataNamesRow,
  paymentMetadataFor,
  uuidV5,
} from "../../../src/row-identity/index.js";

const base = { entityId: "ent_acme_corp", batchId: "b20261122-abc123", rowKey: "INV-1001", attempt: 1 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("uuidV5", () => {
  it("matches the RFC example (www.example.com in the DNS namespace)", () => {
    expect(uuidV5("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });

  it("refuses a namespace that is not a UUID", () => {
    expect(() => uuidV5("www.example.com", "6ba7b810-9dad-11d1-80b4")).toThrow(/not a UUID/);
  });
});

describe("idempotencyKeyFor", () => {
  it("is a deterministic version 5 UUID without a colon (usable as a BullMQ job id)", () => {
    const key = idempotencyKeyFor(base);
    expect(key).toMatch(UUID);
    expect(idempotencyKeyFor({ ...base })).toBe(key);
  });

  it("differs for another attempt, row, batch, entity or requote generation", () => {
    const key = idempotencyKeyFor(base);
    const others = [
      idempotencyKeyFor({ ...base, attempt: 2 }),
      idempotencyKeyFor({ ...base, rowKey: "INV-1002" }),
      idempotencyKeyFor({ ...base, batchId: "b20261122-abc124" }),
      idempotencyKeyFor({ ...base, entityId: "ent_other" }),
      idempotencyKeyFor(base, 1),
      idempotencyKeyFor(base, 2),
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });

  it("never collides for distinct identities (property)", () => {
    const identity = fc.record({
      batchId: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      rowKey: fc.string({ minLength: 1, maxLength: 12 }),
      attempt: fc.integer({ min: 1, max: 5 }),
      gen: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(identity, identity, (a, b) => {
        const same =
          a.batchId === b.batchId && a.rowKey === b.rowKey && a.attempt === b.attempt && a.gen === b.gen;
        const ka = idempotencyKeyFor({ entityId: "me", ...a }, a.gen);
        const kb = idempotencyKeyFor({ entityId: "me", ...b }, b.gen);
        return same ? ka === kb : ka !== kb;
      }),
    );
  });

  it("refuses batch ids that are digits only or contain a colon", () => {
    expect(() => idempotencyKeyFor({ ...base, batchId: "12345" })).toThrow(RangeError);
    expect(() => idempotencyKeyFor({ ...base, batchId: "a:b" })).toThrow(RangeError);
  });
});

describe("externalIdFor", () => {
  const row = { batchId: "b20261122-abc123", rowNumber: 7, reference: "INV-1001", attempt: 1 };

  it("is the reference on attempt 1 and <reference>-r<attempt> after an operator retry", () => {
    expect(externalIdFor(row)).toBe("INV-1001");
    expect(externalIdFor({ ...row, attempt: 2 })).toBe("INV-1001-r2");
    expect(externalIdFor({ ...row, attempt: 3 })).toBe("INV-1001-r3");
  });

  it("uses <batchId>-row<rowNumber> for a row without a reference", () => {
    expect(externalIdFor({ ...row, reference: undefined })).toBe("b20261122-abc123-row7");
    expect(externalIdFor({ ...row, reference: "", attempt: 2 })).toBe("b20261122-abc123-row7-r2");
  });

  it("stays within the spec's pattern and length, and distinct, for the longest references", () => {
    const long = "A".repeat(EXTERNAL_ID_MAX);
    const ids = [1, 2, 10].map((attempt) => externalIdFor({ ...row, reference: long, attempt }));
    for (const id of ids) {
      expect(id.length).toBeLessThanOrEqual(EXTERNAL_ID_MAX);
      expect(id).toMatch(EXTERNAL_ID_PATTERN);
    }
    expect(ids[0]).toBe(long);
    expect(new Set(ids).size).toBe(3);
    const otherLong = `${"A".repeat(EXTERNAL_ID_MAX - 1)}B`;
    expect(externalIdFor({ ...row, reference: otherLong, attempt: 2 })).not.toBe(ids[1]);
  });

  it("refuses a reference that is not a valid externalId", () => {
    expect(() => externalIdFor({ ...row, reference: "INV 1001" })).toThrow(RangeError);
  });
});

describe("paymentMetadataFor", () => {
  it("adds batch, row and attempt to the sheet's metadata columns, within the spec's limits", () => {
    const metadata = paymentMetadataFor(
      { batchId: "b1-x", rowKey: "INV-1001", attempt: 2 },
      { costCenter: "CC-7", project: "apollo" },
    );
    expect(metadata).toEqual({
      costCenter: "CC-7",
      project: "apollo",
      payouts_batch: "b1-x",
      payouts_row: "INV-1001",
      payouts_attempt: "2",
    });
    expect(Metadata.safeParse(metadata).success).toBe(true);
  });

  it("shortens a row key longer than a metadata value, deterministically, and still matches the row", () => {
    const rowKey = "R".repeat(200);
    const metadata = paymentMetadataFor({ batchId: "b1-x", rowKey, attempt: 1 }, {});
    expect(metadata.payouts_row!.length).toBeLessThanOrEqual(METADATA_VALUE_MAX);
    expect(metadataNamesRow(metadata, "b1-x", rowKey)).toBe(true);
    expect(metadataNamesRow(metadata, "b1-x", `${rowKey}S`)).toBe(false);
    expect(metadataNamesRow(metadata, "b2-x", rowKey)).toBe(false);
  });

  it("refuses sheet metadata that uses a reserved key or leaves no room for the pipeline's keys", () => {
    expect(() =>
      paymentMetadataFor({ batchId: "b1-x", rowKey: "r", attempt: 1 }, { payouts_row: "x" }),
    ).toThrow(MetadataLimitError);
    const many = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, "v"]));
    expect(() => paymentMetadataFor({ batchId: "b1-x", rowKey: "r", attempt: 1 }, many)).toThrow(
      /at most 47/,
    );
  });
});

describe("batch id patterns", () => {
  it("a generated batch id is a valid batch id and has the generated shape the retry folder looks for", () => {
    const id = newBatchId(new Date("2026-11-23T21:54:00.123Z"));
    expect(id).toMatch(/^b20261123T215400-[0-9a-f]{8}$/);
    expect(BATCH_ID_PATTERN.test(id)).toBe(true);
    expect(new RegExp(`^${GENERATED_BATCH_ID_SOURCE}$`).test(id)).toBe(true);
    expect(new RegExp(`^${BATCH_ID_SOURCE}$`).test(id)).toBe(true);
  });

  it("refuses digits only, a colon and more than 64 characters", () => {
    for (const bad of ["12345", "a:b", "x".repeat(65), ""]) expect(BATCH_ID_PATTERN.test(bad)).toBe(false);
    expect(BATCH_ID_PATTERN.test("nightly_2026-11-23")).toBe(true);
  });
});
