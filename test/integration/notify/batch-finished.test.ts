/**
 * NOTIFY_URL: when a batch's last row is final, the final result file is in the outbox and a signed
 * JSON summary reaches the receiver, verifiable with the same code that checks the service's webhooks.
 */

import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BatchFinishedSummary,
  batchFinishedHandler,
  NOTIFY_HEADERS,
  verifyNotification,
} from "../../../src/notify/index.js";
import { createWorkerClient } from "../../../src/pipeline/index.js";
import { type ReconcileService, startReconcileService } from "../../../src/reconcile/index.js";
import { createResultOutbox, defaultResultPath } from "../../../src/results/index.js";
import { instruction, type PipelineHarness, pipelineHarness, REDIS_URL } from "../pipeline/helpers.js";

const SECRET = "notify-test-secret";
let sandbox: RunningSandbox;
let h: PipelineHarness;
let reconcile: ReconcileService;
const received: Array<{ raw: Buffer; headers: IncomingMessage["headers"] }> = [];
const receiver = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  received.push({ raw: Buffer.concat(chunks), headers: req.headers });
  // The first delivery is refused, so the sender must retry.
  res.statusCode = received.length === 1 ? 503 : 204;
  res.end();
});

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 20, toFinalMs: 20 } });
  h = await pipelineHarness(sandbox, "notify");
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  await reconcile?.stop(1000);
  await h.close();
  await sandbox.close();
  await new Promise((r) => receiver.close(r));
});

describe("batch finished", () => {
  it("writes the final result file and sends one signed summary, retried until accepted", async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const outbox = createResultOutbox({ store: h.store, dataDir: h.dataDir, debounceMs: 50 });
    const finished: string[] = [];
    const handler = batchFinishedHandler({
      store: h.store,
      outbox,
      dataDir: h.dataDir,
      notify: { url, secret: SECRET },
    });
    reconcile = await startReconcileService({
      redisUrl: REDIS_URL,
      prefix: h.prefix,
      client: createWorkerClient({ apiUrl: sandbox.url, apiKey: sandbox.apiKey, entityId: "me" }),
      sweepEveryMs: 200,
      staleAfterMs: 50,
      onBatchFinished: async (batchId) => {
        finished.push(batchId);
        await handler(batchId);
      },
    });
    await h.startWorker();
    const batchId = await h.submit([instruction({ amount: 12_000 }), instruction({ amount: 4_513 })]);

    const deadline = Date.now() + 20_000;
    while (received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(received).toHaveLength(2);
    expect(finished).toEqual([batchId]);
    const [first, last] = [received[0]!, received[1]!];
    // A Standard Webhook: verified with the secret (and only with it), one id for every try of it.
    const verified = verifyNotification(last.raw, last.headers, SECRET);
    expect(() => verifyNotification(last.raw, last.headers, "another secret")).toThrow();
    expect(verified.type).toBe("batch.finished");
    expect(last.headers[NOTIFY_HEADERS.id]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(first.headers[NOTIFY_HEADERS.id]).toBe(last.headers[NOTIFY_HEADERS.id]);
    expect(first.raw.equals(last.raw)).toBe(true); // the retry sends the same bytes
    const summary = verified.data as BatchFinishedSummary;
    expect(summary).toMatchObject({
      event: "batch.finished",
      batchId,
      rows: 2,
      counts: { completed: 1, failed: 1 },
      totals: {
        USD: { completed: { minor: 12_000, amount: "120.00" }, failed: { minor: 4_513, amount: "45.13" } },
      },
    });
    const batch = (await h.store.getBatch(batchId))!;
    expect(summary.resultFile).toBe(defaultResultPath(h.dataDir, batch, batch.sheet.format));
    const written = await readFile(summary.resultFile!, "utf8");
    expect(written).toContain(",completed,");
    expect(written).toContain(",failed,");
    await outbox.close();
  }, 40_000);
});
