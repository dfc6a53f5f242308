import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Attachment,
  DeliveryEstimate,
  FastPaymentEligibility,
  FeeCalculatorResult,
} from "../../../src/payouts-api/wire-types.js";
import { ACH_PAYMENT, call, expectError } from "./helpers.js";

describe("sandbox tools", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb.close());

  it("calculates fees per rail, plus card processing for card funding", async () => {
    const ach = await call(sb, "POST", "/tools/fee-calculator", { body: ACH_PAYMENT });
    expect(FeeCalculatorResult.parse(ach.body).fees).toEqual([
      { type: "rail", amount: 25, currency: "USD", chargeTo: "originator" },
    ]);
    const card = await call(sb, "POST", "/tools/fee-calculator", {
      body: {
        ...ACH_PAYMENT,
        amount: 10_000,
        originatingAccountId: "acct_corporate_card",
        deliveryPreference: "same-day-ach",
      },
    });
    expect(card.body.fees).toEqual([
      { type: "rail", amount: 100, currency: "USD", chargeTo: "originator" },
      { type: "card-processing", amount: 290, currency: "USD", chargeTo: "originator" },
    ]);
    const mismatch = await call(sb, "POST", "/tools/fee-calculator", {
      body: { ...ACH_PAYMENT, deliveryPreference: "standard-check" },
    });
    expectError(mismatch, 400, "invalid_request_error", "FEE_CALCULATION_FAILED");
  });

  it("answers fast-payment eligibility with the documented rule", async () => {
    const ask = (body: Record<string, unknown>) =>
      call(sb, "POST", "/tools/fast-payment-eligibility", { body: { ...ACH_PAYMENT, ...body } });
    expect(
      FastPaymentEligibility.parse((await ask({ deliveryPreference: "rtp", amount: 10_000_000 })).body),
    ).toEqual({ eligible: true, reasons: [] });
    expect((await ask({ deliveryPreference: "same-day-ach", amount: 100_000_000 })).body.eligible).toBe(true);
    expect((await ask({ deliveryPreference: "same-day-ach", amount: 100_000_001 })).body.eligible).toBe(
      false,
    );
    const unverified = await ask({
      deliveryPreference: "same-day-ach",
      originatingAccountId: "acct_payroll_unverified",
    });
    expect(unverified.body.reasons.map((r: { code: string }) => r.code)).toContain("ACCOUNT_NOT_VERIFIED");
    expect(
      (
        await ask({
          deliveryPreference: "instant-domestic-wire",
          receivingAccountId: "acct_vendor_wire",
          amount: 999_999_999,
        })
      ).body.eligible,
    ).toBe(true);
    expect(
      (await ask({ deliveryPreference: "overnight-check", receivingAccountId: "acct_vendor_check" })).body
        .eligible,
    ).toBe(true);
    const fx = await ask({
      deliveryPreference: "fast-international-fx",
      receivingAccountId: "acct_supplier_eur",
      amount: 5_000_000,
    });
    expect(fx.body.eligible).toBe(false);
    expectError(
      await ask({ deliveryPreference: "rtp", receivingAccountId: "acct_vendor_check" }),
      400,
      "invalid_request_error",
    );
  });

  it("estimates delivery dates on business days", async () => {
    const res = await call(sb, "POST", "/tools/delivery-estimate", {
      body: {
        originatingAccountId: "acct_ops_checking",
        receivingAccountId: "acct_vendor_check",
        deliveryPreference: "standard-check",
      },
    });
    const est = DeliveryEstimate.parse(res.body);
    const date = new Date(`${est.estimatedDeliveryDate}T00:00:00Z`);
    expect([0, 6]).not.toContain(date.getUTCDay());
    expect(date.getTime()).toBeGreaterThan(Date.now());
    expectError(
      await call(sb, "POST", "/tools/delivery-estimate", {
        body: { ...ACH_PAYMENT, receivingAccountId: "acct_nope" },
      }),
      404,
      "not_found_error",
    );
  });
});

describe("sandbox attachments", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb.close());

  it("stores a base64 upload and answers its metadata", async () => {
    const content = Buffer.from("%PDF-1.4\n%sandbox\n");
    const res = await call(sb, "POST", "/attachments", {
      body: {
        fileName: "invoice.pdf",
        contentType: "application/pdf",
        contentBase64: content.toString("base64"),
      },
    });
    expect(res.status).toBe(201);
    const att = Attachment.parse(res.body);
    expect(att.id).toMatch(/^att_[0-9a-f]{24}$/);
    expect(att.size).toBe(content.length);
  });

  it("refuses invalid base64 and files above 10 MiB", async () => {
    const bad = await call(sb, "POST", "/attachments", {
      body: { fileName: "a.pdf", contentType: "application/pdf", contentBase64: "@@not base64@@" },
    });
    expectError(bad, 400, "invalid_request_error", "VALIDATION_ERROR");
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 1).toString("base64");
    const tooBig = await call(sb, "POST", "/attachments", {
      body: { fileName: "big.pdf", contentType: "application/pdf", contentBase64: big },
    });
    expectError(tooBig, 400, "invalid_request_error", "VALIDATION_ERROR");
  });
});
