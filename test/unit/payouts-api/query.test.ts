import { describe, expect, it } from "vitest";
import { toQueryString } from "../../../src/payouts-api/index.js";

describe("toQueryString", () => {
  it("returns an empty string when there is nothing to send", () => {
    expect(toQueryString(undefined)).toBe("");
    expect(toQueryString({})).toBe("");
    expect(toQueryString({ limit: undefined, metadata: {} })).toBe("");
  });

  it("serializes pagination, date and metadata filters as the spec names them", () => {
    const qs = toQueryString({
      limit: 50,
      startingAfter: "pay_123",
      externalId: "INV-7",
      createdGte: "2026-01-01T00:00:00Z",
      createdLte: "2026-01-31T23:59:59+01:00",
      metadata: { batch: "b1", row: "7" },
    });
    expect(qs).toBe(
      "?limit=50&startingAfter=pay_123&externalId=INV-7" +
        "&created[gte]=2026-01-01T00%3A00%3A00Z&created[lte]=2026-01-31T23%3A59%3A59%2B01%3A00" +
        "&metadata[batch]=b1&metadata[row]=7",
    );
  });

  it("percent-encodes metadata keys and values so they round-trip", () => {
    const qs = toQueryString({ metadata: { "a key/é": "x&y=z +1" }, endingBefore: "pay_9" });
    const parsed = new URLSearchParams(qs.slice(1));
    expect(parsed.get("metadata[a key/é]")).toBe("x&y=z +1");
    expect(parsed.get("endingBefore")).toBe("pay_9");
  });

  it("passes endpoint filters through", () => {
    expect(toQueryString({ status: "failed", ownershipType: "internal", type: "ach" })).toBe(
      "?status=failed&ownershipType=internal&type=ach",
    );
  });
});
