import path from "node:path";
import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { enqueueQueuedRows } from "../../../src/batches/index.js";
import { idempotencyKeyFor } from "../../../src/row-identity/index.js";
import {
  instruction,
  type PipelineHarness,
  paymentMadeEarlier,
  paymentsOfBatch,
  pipelineHarness,
  waitForRows,
} from "./helpers.js";

let sandbox: RunningSandbox;
let h: PipelineHarness;

beforeAll(async () => {
  // A slow clock: payments stay `scheduled`, so each row ends `submitted` by this pipeline's hand.
  sandbox = await startSandbox({ clock: { toInProgressMs: 600_000, toFinalMs: 600_000 } });
  h = await pipelineHarness(sandbox, "pipeline");
  await h.startWorker();
});

afterEach(() => {
  sandbox.setFaults({
    errorRate5xx: 0,
    rateLimitRate: 0,
    dropAfterStoreRate: 0,
    failNextRequests: 0,
    rateLimitNextRequests: 0,
    dropNextPaymentResponses: 0,
  });
});

afterAll(async () => {
  await h.close();
  await sandbox.close();
});

describe("payment pipeline against the sandbox", () => {
  it("pays every row exactly once on every rail, FX rows with a stored quote, with the row's identity", async () => {
    const attachment = path.resolve("samples/attachments/invoice-mxn-0001.pdf");
    const rows = [
      instruction({ receivingAccountId: "acct_vendor_ach", deliveryPreference: "standard-ach" }),
      instruction({ receivingAccountId: "acct_vendor_check", deliveryPreference: "standard-check" }),
      instruction({ receivingAccountId: "acct_vendor_wire", deliveryPreference: "domestic-wire" }),
      instruction({ receivingAccountId: "acct_vendor_vcard", deliveryPreference: "virtual-card" }),
      instruction({ receivingAccountId: "acct_contractor_gusd", deliveryPreference: "international-gusd" }),
      instruction({ receivingAccountId: "acct_supplier_usd_intl", deliveryPreference: "international-fx" }),
      instruction({
        receivingAccountId: "acct_supplier_eur",
        deliveryPreference: "international-fx",
        currency: "EUR",
        amount: 125_000,
        purpose: "Invoice 7 for machine parts",
        metadata: { costCenter: "CC-7" },
      }),
      instruction({
        receivingAccountId: "acct_supplier_jpy",
        deliveryPreference: "international-fx",
        currency: "JPY",
        amount: 50_000,
      }),
      instruction({
        receivingAccountId: "acct_supplier_mxn",
        deliveryPreference: "international-fx",
        currency: "MXN",
        amount: 99_000,
        attachment: { kind: "file", path: attachment },
      }),
      instruction({
        receivingAccountId: "acct_supplier_mxn",
        deliveryPreference: "international-fx",
        currency: "MXN",
        amount: 88_000,
        attachment: { kind: "file", path: attachment },
      }),
      instruction({ reference: undefined, rowNumber: 42, rowKey: "#42" }),
    ];
    const attachmentsBefore = sandbox.state.attachments.size;
    const batchId = await h.submit(rows);
    const done = await waitForRows(h.store, batchId);

    const payments = await paymentsOfBatch(h.api, batchId);
    expect(payments).toHaveLength(rows.length);
    for (const row of done) {
      expect(row.state).toBe("submitted");
      const mine = payments.filter((p) => p.metadata?.payouts_row === row.rowKey);
      expect(mine).toHaveLength(1);
      const payment = mine[0]!;
      expect(row.paymentId).toBe(payment.id);
      expect(payment.externalId).toBe(
        row.instruction.reference ?? `${(await h.store.getBatch(batchId))?.fileKey}-row42`,
      );
      expect(payment.metadata).toMatchObject({
        payouts_batch: batchId,
        payouts_attempt: "1",
        ...row.instruction.metadata,
      });
      expect(payment.amount).toBe(row.instruction.amount);
      if (row.instruction.currency !== "USD") {
        expect(row.quote?.quoteToken).toBeTruthy();
        expect(row.debitUsd).toBe(row.quote?.usdAmount);
      } else {
        expect(row.quote).toBeUndefined();
      }
    }
    const eur = payments.find((p) => p.currency === "EUR")!;
    expect(eur.compliance?.purpose).toBe("Invoice 7 for machine parts");
    // One upload for the two rows that name the same file.
    const mxn = payments.filter((p) => p.currency === "MXN");
    expect(mxn[0]!.attachmentId).toBeDefined();
    expect(mxn[1]!.attachmentId).toBe(mxn[0]!.attachmentId);
    expect(sandbox.state.attachments.size).toBe(attachmentsBefore + 1);
  });

  it("rejects a row the service refuses (4xx) with its code and message, without retrying", async () => {
    const row = instruction({ originatingAccountId: "acct_payroll_unverified" });
    const batchId = await h.submit([row]);
    const [done] = await waitForRows(h.store, batchId);
    expect(done!.state).toBe("rejected");
    expect(done!.errorCode).toBe("ACCOUNT_NOT_VERIFIED");
    expect(done!.errorMessage).toMatch(/verification/);
    const job = await h.pipeline.queue.getJob(
      idempotencyKeyFor({ entityId: "me", batchId, rowKey: row.rowKey, attempt: 1 }),
    );
    expect(job?.attemptsMade).toBe(1);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(0);
  });

  it("rejects a row whose FX quote the service refuses (currency not the payee's), without retrying", async () => {
    const row = instruction({
      receivingAccountId: "acct_supplier_gbp",
      deliveryPreference: "international-fx",
      currency: "EUR",
    });
    const batchId = await h.submit([row]);
    const [done] = await waitForRows(h.store, batchId);
    expect(done).toMatchObject({ state: "rejected", errorCode: "VALIDATION_ERROR" });
    expect(done!.quote).toBeUndefined();
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(0);
  });

  it("rejects a reference reused from an earlier batch as REFERENCE_REUSED, naming the earlier payment", async () => {
    const first = instruction();
    const firstBatch = await h.submit([first]);
    const [paid] = await waitForRows(h.store, firstBatch);
    expect(paid!.state).toBe("submitted");

    const again = instruction({ reference: first.reference, rowKey: first.rowKey, amount: 777_00 });
    const secondBatch = await h.submit([again]);
    const [reused] = await waitForRows(h.store, secondBatch);
    expect(reused!.state).toBe("rejected");
    expect(reused!.errorCode).toBe("REFERENCE_REUSED");
    expect(reused!.errorMessage).toContain(paid!.paymentId!);
    expect(reused!.paymentId).toBeUndefined();
    const byRef = await h.api.payments.list({ externalId: first.reference! });
    expect(byRef.data).toHaveLength(1);
  });

  it("adopts our own earlier payment found through 409 DUPLICATE_EXTERNAL_ID", async () => {
    const row = instruction();
    const batchId = `b-adopt-${Date.now().toString(36)}`;
    // Our earlier try under a key the service no longer remembers: same externalId, metadata naming the row.
    const earlier = await paymentMadeEarlier(h.api, row, batchId, `expired-key-${batchId}`);
    await h.submit([row], { batchId });
    const [done] = await waitForRows(h.store, batchId);
    expect(done!.state).toBe("submitted");
    expect(done!.paymentId).toBe(earlier.id);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
  });

  it("adopts a payment whose response was lost: exactly one payment per row", async () => {
    sandbox.setFaults({ dropNextPaymentResponses: 3 });
    const rows = [instruction(), instruction(), instruction(), instruction()];
    const batchId = await h.submit(rows);
    const done = await waitForRows(h.store, batchId);
    expect(done.map((r) => r.state)).toEqual(rows.map(() => "submitted"));
    const payments = await paymentsOfBatch(h.api, batchId);
    expect(payments).toHaveLength(rows.length);
    expect(new Set(done.map((r) => r.paymentId))).toEqual(new Set(payments.map((p) => p.id)));
  });

  it("retries 5xx and 429 with the same key and body: one payment per row, no new key", async () => {
    sandbox.setFaults({ failNextRequests: 6, rateLimitNextRequests: 2 });
    const rows = [
      instruction(),
      instruction(),
      instruction({
        receivingAccountId: "acct_supplier_gbp",
        deliveryPreference: "international-fx",
        currency: "GBP",
      }),
    ];
    const batchId = await h.submit(rows);
    const done = await waitForRows(h.store, batchId);
    expect(done.every((r) => r.state === "submitted" && r.requoteGeneration === 0)).toBe(true);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(rows.length);
  });

  it("ends a row in `error` with the last cause when transport faults outlast every try", async () => {
    sandbox.setFaults({ errorRate5xx: 1 });
    const batchId = await h.submit([instruction()], { attempts: 2 });
    const [done] = await waitForRows(h.store, batchId);
    expect(done!.state).toBe("error");
    expect(done!.errorCode).toBe("SERVICE_UNAVAILABLE");
    sandbox.setFaults({ errorRate5xx: 0 });
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(0);
  });

  it("an operator retry pays under <reference>-r2 with a new key and attempt metadata", async () => {
    sandbox.setFaults({ errorRate5xx: 1 });
    const row = instruction();
    const batchId = await h.submit([row], { attempts: 1 });
    const [failed] = await waitForRows(h.store, batchId);
    expect(failed!.state).toBe("error");
    sandbox.setFaults({ errorRate5xx: 0 });

    expect((await h.store.startNewAttempt(batchId, row.rowKey, 1)).outcome).toBe("ok");
    const batch = (await h.store.getBatch(batchId))!;
    expect(await enqueueQueuedRows(h.store, h.pipeline.enqueuer, batch)).toBe(1);
    const [retried] = await waitForRows(h.store, batchId);
    expect(retried).toMatchObject({ state: "submitted", attempt: 2 });
    const [payment] = await paymentsOfBatch(h.api, batchId);
    expect(payment!.externalId).toBe(`${row.reference}-r2`);
    expect(payment!.metadata?.payouts_attempt).toBe("2");
  });

  it("an operator retry of an errored row whose payment did land adopts that payment instead of paying again", async () => {
    const row = instruction();
    let landed = "";
    const batchId = await h.submit([row], {
      beforeEnqueue: async (id) => {
        // Attempt 1 reached the service, but every answer was lost and the row ended in `error`.
        const payment = await paymentMadeEarlier(h.api, row, id, `lost-${id}`);
        landed = payment.id;
        await h.store.changeRow(id, row.rowKey, { to: "error", fields: { errorCode: "ECONNRESET" } });
      },
    });
    expect((await h.store.startNewAttempt(batchId, row.rowKey, 1)).outcome).toBe("ok");
    await enqueueQueuedRows(h.store, h.pipeline.enqueuer, (await h.store.getBatch(batchId))!);
    const [done] = await waitForRows(h.store, batchId);
    expect(done).toMatchObject({ state: "submitted", attempt: 2, paymentId: landed });
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
  });

  it("replaces a stored quote that expired before it was ever sent, under the same key", async () => {
    const row = instruction({
      receivingAccountId: "acct_supplier_eur",
      deliveryPreference: "international-fx",
      currency: "EUR",
    });
    // The quote was stored by an earlier try that crashed before sending; it has expired since.
    const plant = (batchId: string) =>
      h.store.changeRow(batchId, row.rowKey, {
        fields: {
          quote: {
            quoteToken: "fxq_stale",
            expiresAt: new Date(Date.now() - 60_000).toISOString(),
            foreignAmount: row.amount,
            currency: "EUR",
            usdAmount: 1,
            usdToForeignRate: 0.9,
            generation: 0,
          },
        },
      });
    const batchId = await h.submit([row], { beforeEnqueue: async (id) => void (await plant(id)) });
    const [done] = await waitForRows(h.store, batchId);
    expect(done!.state).toBe("submitted");
    expect(done!.quote?.quoteToken).not.toBe("fxq_stale");
    expect(done!.requoteGeneration).toBe(0);
    expect(done!.history.some((e) => e.note?.includes("expired before sending"))).toBe(true);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
  });

  it("after FX_QUOTE_INVALID looks the payment up and, when none exists, pays under a new key and quote", async () => {
    const row = instruction({
      receivingAccountId: "acct_supplier_gbp",
      deliveryPreference: "international-fx",
      currency: "GBP",
    });
    // A quote the service no longer accepts although our record says it is still valid.
    const plant = (batchId: string) =>
      h.store.changeRow(batchId, row.rowKey, {
        fields: {
          quote: {
            quoteToken: "fxq_unknown",
            expiresAt: new Date(Date.now() + 600_000).toISOString(),
            foreignAmount: row.amount,
            currency: "GBP",
            usdAmount: 1,
            usdToForeignRate: 0.79,
            generation: 0,
          },
        },
      });
    const batchId = await h.submit([row], { beforeEnqueue: async (id) => void (await plant(id)) });
    const [done] = await waitForRows(h.store, batchId);
    expect(done!.state).toBe("submitted");
    expect(done!.requoteGeneration).toBe(1);
    expect(done!.quote?.quoteToken).not.toBe("fxq_unknown");
    expect(done!.history.some((e) => e.note?.startsWith("FX_QUOTE_INVALID"))).toBe(true);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
  });
});
