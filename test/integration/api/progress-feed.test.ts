/**
 * The live feed (`GET /api/v1/events`) tells its listeners of what a page shows beyond the counts: a
 * batch paused and resumed by someone else while none of its rows moves is sent again, so an open
 * page shows the pause without a reload.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiStack,
  callApi,
  type Json,
  startApiStack,
  submitSheetThroughApi,
  until,
  withBearer,
} from "../../support/api-stack.js";

let stack: ApiStack;
let token: string;

beforeAll(async () => {
  // Payments stay scheduled: once every row is sent, nothing moves the batch's counts.
  stack = await startApiStack({
    label: "progress-feed",
    clock: { toInProgressMs: 600_000, toFinalMs: 600_000 },
  });
  token = (await stack.server.auth.createToken("ops", "admin", "test")).token;
}, 60_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

const call = (method: string, route: string, body?: unknown) =>
  callApi(stack.server.url, token, method, route, body);

/** Reads the feed's events until one for `batchId` passes `test`, or gives up after `ms`. */
async function nextEvent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  batchId: string,
  test: (batch: Json) => boolean,
  ms: number,
): Promise<Json | undefined> {
  const decoder = new TextDecoder();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  let text = "";
  try {
    for (;;) {
      const read = await Promise.race([reader.read(), expired]);
      if (!read || read.done) return undefined;
      text += decoder.decode(read.value, { stream: true });
      const events = text.split("\n\n");
      text = events.pop() ?? "";
      for (const event of events) {
        const data = event.split("\n").find((l) => l.startsWith("data: "));
        if (!event.startsWith("event: batch") || !data) continue;
        const batch = JSON.parse(data.slice("data: ".length)) as Json;
        if (batch.id === batchId && test(batch)) return batch;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

describe("the live feed", () => {
  it("sends a batch again when it is paused and resumed, though none of its rows moves", async () => {
    const sheet = [
      "reference,from_account,to_account,amount,currency",
      "FEED-1,ops-checking,vendor-ach,31.00,USD",
      "FEED-2,ops-checking,vendor-ach,32.00,USD",
    ].join("\n");
    const batchId = await submitSheetThroughApi(stack.server.url, token, "feed.csv", `${sheet}\n`);
    await until(
      "every row sent",
      async () => (await call("GET", `/api/v1/batches/${batchId}`)).json.counts.submitted === 2,
      30_000,
    );
    const events = await fetch(`${stack.server.url}/api/v1/events`, withBearer(token));
    const reader = events.body!.getReader();
    try {
      // The first poll sends every watched batch once.
      expect(await nextEvent(reader, batchId, (b) => b.pause === null, 10_000)).toBeDefined();
      expect((await call("POST", `/api/v1/batches/${batchId}/pause`, { reason: "check row 3" })).status).toBe(
        200,
      );
      const paused = await nextEvent(reader, batchId, (b) => b.pause !== null, 10_000);
      expect(paused?.pause).toMatchObject({ by: "ops", reason: "check row 3" });
      expect(paused?.counts.submitted).toBe(2);
      expect((await call("POST", `/api/v1/batches/${batchId}/resume`)).status).toBe(200);
      expect(await nextEvent(reader, batchId, (b) => b.pause === null, 10_000)).toBeDefined();
    } finally {
      await reader.cancel();
    }
  });
});
