/**
 * A create's answer is the row's payment only when it names what was sent. A proxy between the worker
 * and the sandbox answers one create with ANOTHER row's payment (status 201, a well-formed body): the
 * row must not record that payment; it is resolved against the ledger by its externalId and records
 * the payment that was really created for it.
 */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkerClient, type PaymentService, startPaymentService } from "../../../src/pipeline/index.js";
import { PIPELINE_DEFAULTS } from "../../support/settings.js";
import { type HoldingProxy, startHoldingProxy } from "../storm/holding-proxy.js";
import {
  instruction,
  type PipelineHarness,
  paymentsOfBatch,
  pipelineHarness,
  REDIS_URL,
  waitForRows,
} from "./helpers.js";

/** A proxy whose second created payment's answer is the first one's body (status 201, well-formed). */
async function startSwappingProxy(target: string): Promise<HoldingProxy & { swapped: () => number }> {
  let firstCreated: Buffer | undefined;
  let swaps = 0;
  const proxy = await startHoldingProxy(target, {
    rewriteAnswer: (method, path, status, body) => {
      if (method !== "POST" || path !== "/payments" || status !== 201) return undefined;
      if (firstCreated === undefined) firstCreated = body;
      else if (swaps === 0) {
        swaps++;
        return firstCreated;
      }
      return undefined;
    },
  });
  return Object.assign(proxy, { swapped: () => swaps });
}

let sandbox: RunningSandbox;
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSwappingProxy>>;
let worker: PaymentService;

beforeAll(async () => {
  sandbox = await startSandbox({ clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  h = await pipelineHarness(sandbox, "foreign-answer");
  proxy = await startSwappingProxy(sandbox.url);
  worker = await startPaymentService({
    ...PIPELINE_DEFAULTS,
    redisUrl: REDIS_URL,
    prefix: h.prefix,
    jobs: { attempts: 8, backoffMs: 50 },
    client: createWorkerClient({ apiUrl: proxy.url, apiKey: sandbox.apiKey, entityId: "me" }),
    // One at a time: the second create is answered after the first one's answer was seen.
    concurrency: 1,
  });
});

afterAll(async () => {
  await worker.stop(2000);
  await h.close();
  await proxy.close();
  await sandbox.close();
});

describe("an answer naming another row's payment", () => {
  it("is not adopted: each row records its own payment, resolved by externalId", async () => {
    const rows = [instruction(), instruction(), instruction()];
    const batchId = await h.submit(rows);
    const done = await waitForRows(
      h.store,
      batchId,
      (r) => r.state !== "queued" && r.paymentId !== undefined,
    );
    expect(proxy.swapped()).toBe(1);

    const ledger = await paymentsOfBatch(h.api, batchId);
    expect(ledger).toHaveLength(rows.length);
    const byExternalId = new Map(ledger.map((p) => [p.externalId, p.id]));
    for (const row of done) {
      expect(row.state).toBe("submitted");
      expect(row.paymentId).toBe(byExternalId.get(row.instruction.reference));
    }
    expect(new Set(done.map((r) => r.paymentId)).size).toBe(rows.length);
  });
});
