import { loadDefaultSeed, type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Payment, PaymentList } from "../../../src/payouts-api/wire-types.js";
import { ACH_PAYMENT, call, createPayment, expectError } from "./helpers.js";

const ATTACHMENT = {
  fileName: "invoice.pdf",
  contentType: "application/pdf",
  contentBase64: Buffer.from("%PDF-1.4 test").toString("base64"),
};

describe("sandbox payment creation rules", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    // A long clock keeps every payment scheduled while these tests run.
    sb = await startSandbox({ clock: { toInProgressMs: 60_000, toFinalMs: 60_000 } });
  });
  afterAll(() => sb.close());

  it("creates a USD payment: 201, scheduled, empty fees, valid wire shape, api.payment.created", async () => {
    const res = await createPayment(sb, {
      ...ACH_PAYMENT,
      payerMemo: "INV-1001",
      recipientNote: "Thanks!",
      externalId: "row-1",
      metadata: { batch: "b1", row: "1" },
    });
    expect(res.status).toBe(201);
    const p = Payment.parse(res.body);
    expect(p.id).toMatch(/^pay_[0-9a-f]{24}$/);
    expect(p).toMatchObject({
      status: "scheduled",
      fees: [],
      currency: "USD",
      deliveryPreference: "standard-ach",
    });
    expect(p.fx).toBeUndefined();
    const event = sb.state.events.find((e) => e.delivery.id === p.id);
    expect(event?.delivery).toMatchObject({
      event: "api.payment.created",
      externalId: "row-1",
      entityExternalId: "acme-corp",
      metadata: { batch: "b1", row: "1" },
    });
    expect((await call(sb, "GET", `/payments/${p.id}`)).body).toEqual(res.body);
  });

  it("requires an Idempotency-Key of at most 255 characters", async () => {
    expectError(
      await call(sb, "POST", "/payments", { body: ACH_PAYMENT }),
      400,
      "invalid_request_error",
      "IDEMPOTENCY_KEY_REQUIRED",
    );
    const long = await call(sb, "POST", "/payments", { body: ACH_PAYMENT, idempotencyKey: "k".repeat(256) });
    expectError(long, 400, "invalid_request_error", "VALIDATION_ERROR");
  });

  it("409s a reused externalId, naming the existing payment", async () => {
    const first = await createPayment(sb, { ...ACH_PAYMENT, externalId: "inv-dup" });
    const second = await createPayment(sb, { ...ACH_PAYMENT, amount: 999, externalId: "inv-dup" });
    expectError(second, 409, "conflict_error", "DUPLICATE_EXTERNAL_ID");
    expect(second.body.error.details.existingId).toBe(first.body.id);
    expect(second.body.error.message).toContain(first.body.id);
  });

  it("validates externalId and metadata limits", async () => {
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, externalId: "has space" }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, metadata: { "a[b]": "x" } }),
      400,
      "invalid_request_error",
    );
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, metadata: { k: "v".repeat(101) } }),
      400,
      "invalid_request_error",
    );
  });

  it("404s unknown accounts and 400s wrong ownership", async () => {
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, receivingAccountId: "acct_nope" }),
      404,
      "not_found_error",
      "NOT_FOUND",
    );
    const swapped = await createPayment(sb, {
      ...ACH_PAYMENT,
      originatingAccountId: "acct_vendor_ach",
      receivingAccountId: "acct_vendor_ach_2",
    });
    expectError(swapped, 400, "invalid_request_error", "INVALID_ACCOUNT_TYPE");
    const toInternal = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: "acct_payroll_unverified",
    });
    expectError(toInternal, 400, "invalid_request_error", "INVALID_ACCOUNT_TYPE");
  });

  it("refuses an unverified originating bank account", async () => {
    const res = await createPayment(sb, { ...ACH_PAYMENT, originatingAccountId: "acct_payroll_unverified" });
    expectError(res, 400, "invalid_request_error", "ACCOUNT_NOT_VERIFIED");
  });

  it("requires the preference's rail to match the receiving account (payee-card has none)", async () => {
    expectError(
      await createPayment(sb, {
        ...ACH_PAYMENT,
        receivingAccountId: "acct_vendor_check",
        deliveryPreference: "rtp",
      }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, receivingAccountId: "acct_payee_card" }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    const ok = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: "acct_vendor_check",
      deliveryPreference: "overnight-check",
    });
    expect(ok.status).toBe(201);
  });

  it("requires the currency to be the receiving account's (USD when omitted)", async () => {
    expectError(
      await createPayment(sb, { ...ACH_PAYMENT, currency: "EUR" }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    expect((await createPayment(sb, { ...ACH_PAYMENT, currency: "usd" })).status).toBe(201);
    const usdToEur = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: "acct_supplier_eur",
      deliveryPreference: "international-fx",
      currency: "USD",
    });
    expectError(usdToEur, 400, "invalid_request_error", "VALIDATION_ERROR");
    // The FX shape requires currency.
    const noCurrency = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: "acct_supplier_eur",
      deliveryPreference: "international-fx",
    });
    expectError(noCurrency, 400, "invalid_request_error", "VALIDATION_ERROR");
  });

  it("pays a USD-denominated international-fx account in USD without conversion", async () => {
    const res = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: "acct_supplier_usd_intl",
      deliveryPreference: "international-fx",
      currency: "USD",
    });
    expect(res.status).toBe(201);
    expect(res.body.currency).toBe("USD");
    expect(res.body.fx).toBeUndefined();
  });

  it("applies the card-funded rules", async () => {
    const card = { ...ACH_PAYMENT, originatingAccountId: "acct_corporate_card" };
    expectError(await createPayment(sb, card), 400, "invalid_request_error", "VALIDATION_ERROR");
    expectError(
      await createPayment(sb, {
        ...card,
        receivingAccountId: "acct_vendor_wire",
        deliveryPreference: "domestic-wire",
      }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    expectError(
      await createPayment(sb, {
        ...card,
        receivingAccountId: "acct_vendor_vcard",
        deliveryPreference: "virtual-card",
      }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    // No eligibility check for the replacement values, even above the same-day-ach ceiling.
    const big = await createPayment(sb, { ...card, amount: 200_000_000, deliveryPreference: "same-day-ach" });
    expect(big.status).toBe(201);
    expect(big.body.deliveryPreference).toBe("same-day-ach");
    const wire = await createPayment(sb, {
      ...card,
      receivingAccountId: "acct_vendor_wire",
      deliveryPreference: "instant-domestic-wire",
    });
    expect(wire.status).toBe(201);
    const check = await createPayment(sb, {
      ...card,
      receivingAccountId: "acct_vendor_check",
      deliveryPreference: "standard-check",
    });
    expect(check.status).toBe(201);
  });

  it("checks faster variants from a bank account for eligibility and never downgrades them", async () => {
    const rtpOk = await createPayment(sb, { ...ACH_PAYMENT, amount: 10_000_000, deliveryPreference: "rtp" });
    expect(rtpOk.status).toBe(201);
    expect(rtpOk.body.deliveryPreference).toBe("rtp");
    const rtpTooBig = await createPayment(sb, {
      ...ACH_PAYMENT,
      amount: 10_000_001,
      deliveryPreference: "rtp",
    });
    expectError(rtpTooBig, 400, "invalid_request_error", "VALIDATION_ERROR");
    expect(rtpTooBig.body.error.details.reasons[0].code).toBe("AMOUNT_ABOVE_LIMIT");
    const sameDay = await createPayment(sb, {
      ...ACH_PAYMENT,
      amount: 100_000_001,
      deliveryPreference: "same-day-ach",
    });
    expectError(sameDay, 400, "invalid_request_error", "VALIDATION_ERROR");
    // The eligibility tool gives the same answer.
    const tool = await call(sb, "POST", "/tools/fast-payment-eligibility", {
      body: { ...ACH_PAYMENT, amount: 10_000_001, deliveryPreference: "rtp" },
    });
    expect(tool.body.eligible).toBe(false);
  });

  it("refuses any faster variant to a payee flagged sandboxFastIneligible", async () => {
    const payee = await call(sb, "POST", "/accounts", {
      body: {
        ownershipType: "external",
        type: "ach",
        counterPartyName: "Slow Bank Customer",
        bankAccount: { accountType: "checking", routingNumber: "011000015", accountNumber: "5550001111" },
        metadata: { sandboxFastIneligible: "true" },
      },
    });
    const fast = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: payee.body.id,
      deliveryPreference: "same-day-ach",
    });
    expectError(fast, 400, "invalid_request_error", "VALIDATION_ERROR");
    const standard = await createPayment(sb, { ...ACH_PAYMENT, receivingAccountId: payee.body.id });
    expect(standard.status).toBe(201);
  });

  it("requires an attachment on the MXN payee's first payment, and 404s another entity's attachment", async () => {
    const mxn = {
      amount: 250_000,
      originatingAccountId: "acct_ops_checking",
      receivingAccountId: "acct_supplier_mxn",
      deliveryPreference: "international-fx",
      currency: "MXN",
      compliance: { type: "goods-and-services", purpose: "Fabric order 42" },
    };
    expectError(await createPayment(sb, mxn), 400, "invalid_request_error", "ATTACHMENT_REQUIRED");
    expectError(
      await createPayment(sb, { ...mxn, attachmentId: "att_unknown" }),
      404,
      "not_found_error",
      "NOT_FOUND",
    );
    const att = await call(sb, "POST", "/attachments", { body: ATTACHMENT });
    expect(att.status).toBe(201);
    const first = await createPayment(sb, { ...mxn, attachmentId: att.body.id });
    expect(first.status).toBe(201);
    expect(first.body.attachmentId).toBe(att.body.id);
    // Paid before (scheduled counts): no attachment needed any more.
    expect((await createPayment(sb, mxn)).status).toBe(201);
    // An attachment on a payee that does not need one is accepted.
    expect((await createPayment(sb, { ...ACH_PAYMENT, attachmentId: att.body.id })).status).toBe(201);
  });

  it("404s an attachment that belongs to another entity", async () => {
    const other = await call(sb, "POST", "/entities", { body: { name: "Other Co", businessType: "llc" } });
    try {
      const foreign = await call(sb, "POST", "/attachments", { entity: other.body.id, body: ATTACHMENT });
      expect(foreign.status).toBe(201);
      const res = await createPayment(
        sb,
        { ...ACH_PAYMENT, attachmentId: foreign.body.id },
        { entity: sb.entityId },
      );
      expectError(res, 404, "not_found_error", "NOT_FOUND");
    } finally {
      await call(sb, "DELETE", `/entities/${other.body.id}`);
    }
  });

  it("enforces Service-Sonar-Token when sent", async () => {
    const minted = await call(sb, "POST", "/_sandbox/sonar-tokens", { body: {} });
    expect(minted.status).toBe(201);
    expect(minted.body.token).toMatch(/^sonar_\d+_[0-9a-f]{64}$/);
    const good = await createPayment(sb, ACH_PAYMENT, {
      headers: { "service-sonar-token": minted.body.token },
    });
    expect(good.status).toBe(201);
    const forged = minted.body.token.replace(/.$/, (c: string) => (c === "0" ? "1" : "0"));
    const bad = await createPayment(sb, ACH_PAYMENT, { headers: { "service-sonar-token": forged } });
    expectError(bad, 403, "authorization_error");
    const expired = await call(sb, "POST", "/_sandbox/sonar-tokens", { body: { ttlMs: -1 } });
    const late = await createPayment(sb, ACH_PAYMENT, {
      headers: { "service-sonar-token": expired.body.token },
    });
    expectError(late, 403, "authorization_error");
    expect(late.body.error.message).toMatch(/expired/);
  });

  it("edits and cancels only while scheduled; attachmentId cannot change", async () => {
    const p = await createPayment(sb, { ...ACH_PAYMENT, amount: 5077 });
    const edited = await call(sb, "PATCH", `/payments/${p.body.id}`, {
      body: { payerMemo: "new memo", metadata: { m: "1" } },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ payerMemo: "new memo", metadata: { m: "1" }, status: "scheduled" });
    expectError(
      await call(sb, "PATCH", `/payments/${p.body.id}`, { body: { attachmentId: "att_x" } }),
      400,
      "invalid_request_error",
    );
    const canceled = await call(sb, "PATCH", `/payments/${p.body.id}`, { body: { status: "canceled" } });
    expect(canceled.body.status).toBe("canceled");
    expectError(
      await call(sb, "PATCH", `/payments/${p.body.id}`, { body: { status: "canceled" } }),
      409,
      "conflict_error",
      "PAYMENT_NOT_CANCELABLE",
    );
    expectError(
      await call(sb, "PATCH", `/payments/${p.body.id}`, { body: { recipientNote: "x" } }),
      409,
      "conflict_error",
      "PAYMENT_NOT_EDITABLE",
    );
    const updates = sb.state.events.filter(
      (e) => e.delivery.id === p.body.id && e.delivery.event === "api.payment.updated",
    );
    expect(updates).toHaveLength(2);
  });

  it("lists payments with status, account, externalId and repeated metadata filters", async () => {
    await createPayment(sb, { ...ACH_PAYMENT, metadata: { batch: "L", row: "1" } });
    const two = await createPayment(sb, {
      ...ACH_PAYMENT,
      receivingAccountId: "acct_vendor_ach_2",
      metadata: { batch: "L", row: "2" },
    });
    const all = PaymentList.parse((await call(sb, "GET", "/payments?metadata[batch]=L")).body);
    expect(all.data).toHaveLength(2);
    expect(all.data[0]?.id).toBe(two.body.id); // newest first
    const both = await call(sb, "GET", "/payments?metadata[batch]=L&metadata[row]=2");
    expect(both.body.data.map((p: { id: string }) => p.id)).toEqual([two.body.id]);
    const byPayee = await call(
      sb,
      "GET",
      "/payments?metadata[batch]=L&receivingAccountId=acct_vendor_ach_2&originatingAccountId=acct_ops_checking&status=scheduled",
    );
    expect(byPayee.body.data.map((p: { id: string }) => p.id)).toEqual([two.body.id]);
    expect((await call(sb, "GET", "/payments?metadata[batch]=L&status=completed")).body.data).toEqual([]);
    expectError(await call(sb, "GET", "/payments?status=done"), 400, "invalid_request_error");
    const byExt = await call(sb, "GET", "/payments?externalId=row-1");
    expect(byExt.body.data).toHaveLength(1);
    const page = await call(sb, "GET", "/payments?limit=1&metadata[batch]=L");
    expect(page.body.hasMore).toBe(true);
  });
});

describe("sandbox payment limitations", () => {
  it("403s domestic payments when payment.domestic:write is restricted (BUSINESS_NOT_ELIGIBLE)", async () => {
    const seed = await loadDefaultSeed();
    const entity = seed.entities[0]!;
    entity.restrictions = [
      {
        operation: "payment.domestic:write",
        code: "AccountUnderReview",
        message: "The account is under review.",
        missingFields: [],
      },
    ];
    const sb = await startSandbox({ seed });
    try {
      const res = await createPayment(sb, ACH_PAYMENT);
      expectError(res, 403, "authorization_error", "BUSINESS_NOT_ELIGIBLE");
      expect(res.body.error.message).toContain("AccountUnderReview");
      // International stays allowed: the two are decided independently.
      const gusd = await createPayment(sb, {
        ...ACH_PAYMENT,
        receivingAccountId: "acct_contractor_gusd",
        deliveryPreference: "international-gusd",
      });
      expect(gusd.status).toBe(201);
    } finally {
      await sb.close();
    }
  });
});
