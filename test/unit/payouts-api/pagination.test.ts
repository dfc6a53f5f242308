import { describe, expect, it } from "vitest";
import { type ListEnvelope, paginate } from "../../../src/payouts-api/index.js";

type Item = { id: string };

describe("paginate", () => {
  it("stops on an empty page even if the server claims hasMore", async () => {
    const calls: (string | undefined)[] = [];
    const pages: ListEnvelope<Item>[] = [
      { data: [{ id: "a" }], hasMore: true },
      { data: [], hasMore: true },
    ];
    const seen: string[] = [];
    for await (const item of paginate(async (p: { startingAfter?: string }) => {
      calls.push(p.startingAfter);
      return pages[calls.length - 1]!;
    }, {})) {
      seen.push(item.id);
    }
    expect(seen).toEqual(["a"]);
    expect(calls).toEqual([undefined, "a"]);
  });

  it("starts after a given cursor and refuses endingBefore", async () => {
    const calls: (string | undefined)[] = [];
    const fetchPage = async (p: { startingAfter?: string; endingBefore?: string }) => {
      calls.push(p.startingAfter);
      return { data: [{ id: "z" }], hasMore: false };
    };
    const items: Item[] = [];
    for await (const item of paginate(fetchPage, { startingAfter: "y" })) items.push(item);
    expect(calls).toEqual(["y"]);
    await expect(paginate(fetchPage, { endingBefore: "x" }).next()).rejects.toThrow(TypeError);
  });
});
