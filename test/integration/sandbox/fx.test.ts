import { priceForeignAmount, type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FxQuote } from "../../../src/payouts-api/wire-types.js";
import { call, createPayment, expectError, waitFor } from "./helpers.js";

const quote = (sb: RunningSandbox, body: Record<string, unknown>) =>
  call(sb, "POST", "/tools/fx-quote", { body });
const EUR_PAYMENT = {
  amount: 100_000,
  originatingAccountId: "acct_ops_checking",
  receivingAccountId: "acct_supplier_eur",
  deliveryPreference: "international-fx",
  currency: "EUR",
  compliance: { type: "goods-and-services", purpose: "Machine parts" },
};

describe("sandbox FX quotes and FX payments", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ fxQuoteTtlMs: 200, clock: { toInProgressMs: 60_000, toFinalMs: 60_000 } });
  });
  afterAll(() => sb.close());

  it("quotes a EUR amount: USD debit = ceil(foreign / rate), with a token and expiry", async () => {
    const res = await quote(sb, {
      receivingAccountId: "acct_supplier_eur",
      amount: 100_000,
      currency: "EUR",
      purpose: "parts",
    });
    expect(res.status).toBe(200);
    const q = FxQuote.parse(res.body);
    expect(q.currency).toBe("EUR");
    expect(q.foreignAmount).toBe(100_000);
    // €1,000.00 at the applied rate, rounded up to the cent.
    expect(q.amount).toBe(Math.ceil((1000 / q.usdToForeignRate) * 100 - 1e-9));
    expect(q.usdToForeignRate).toBeLessThan(q.midMarketRate!);
    expect(Date.parse(q.expiresAt)).toBeGreaterThan(Date.now());
  });

  it("handles zero-decimal currencies (JPY)", async () => {
    const res = await quote(sb, { receivingAccountId: "acct_supplier_jpy", amount: 150_000 });
    expect(res.status).toBe(200);
    // ¥150,000 at about 150.49 per USD is about $996.
    expect(res.body.amount).toBeGreaterThan(99_000);
    expect(res.body.amount).toBeLessThan(101_000);
    expect(res.body.amount).toBe(priceForeignAmount("JPY", 150_000).usdAmount);
  });

  it("refuses accounts that do not convert, wrong currencies and unknown accounts", async () => {
    for (const id of ["acct_vendor_ach", "acct_supplier_usd_intl", "acct_contractor_gusd"]) {
      expectError(
        await quote(sb, { receivingAccountId: id, amount: 100 }),
        400,
        "invalid_request_error",
        "VALIDATION_ERROR",
      );
    }
    expectError(
      await quote(sb, { receivingAccountId: "acct_supplier_eur", amount: 100, currency: "GBP" }),
      400,
      "invalid_request_error",
      "VALIDATION_ERROR",
    );
    expectError(await quote(sb, { receivingAccountId: "acct_nope", amount: 100 }), 404, "not_found_error");
    const nzd = await call(sb, "POST", "/accounts", {
      body: {
        ownershipType: "external",
        type: "international-fx",
        counterPartyName: "Kiwi Ltd",
        international: { currency: "NZD", iban: "NZ0000000000000001234", address: { countryCode: "NZ" } },
      },
    });
    expectError(
      await quote(sb, { receivingAccountId: nzd.body.id, amount: 100 }),
      400,
      "invalid_request_error",
      "UNSUPPORTED_CURRENCY",
    );
  });

  it("pays with a quote token at the quoted debit and exposes fx on the payment", async () => {
    const q = await quote(sb, { receivingAccountId: "acct_supplier_eur", amount: 100_000 });
    const res = await createPayment(sb, { ...EUR_PAYMENT, fxQuoteToken: q.body.quoteToken });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ currency: "EUR", amount: 100_000, fees: [] });
    expect(res.body.fx).toEqual({ debitAmount: q.body.amount, usdToForeignRate: q.body.usdToForeignRate });
  });

  it("prices at the current rate without a token", async () => {
    const res = await createPayment(sb, {
      ...EUR_PAYMENT,
      receivingAccountId: "acct_supplier_gbp",
      currency: "GBP",
    });
    expect(res.status).toBe(201);
    expect(res.body.fx.debitAmount).toBe(priceForeignAmount("GBP", 100_000).usdAmount);
  });

  it("rejects mismatched, unknown and expired tokens with FX_QUOTE_INVALID", async () => {
    const q = await quote(sb, { receivingAccountId: "acct_supplier_eur", amount: 100_000 });
    const token = q.body.quoteToken;
    expectError(
      await createPayment(sb, { ...EUR_PAYMENT, amount: 100_001, fxQuoteToken: token }),
      400,
      "invalid_request_error",
      "FX_QUOTE_INVALID",
    );
    expectError(
      await createPayment(sb, { ...EUR_PAYMENT, fxQuoteToken: "fxq_unknown" }),
      400,
      "invalid_request_error",
      "FX_QUOTE_INVALID",
    );
    const gbpQuote = await quote(sb, { receivingAccountId: "acct_supplier_gbp", amount: 100_000 });
    expectError(
      await createPayment(sb, { ...EUR_PAYMENT, fxQuoteToken: gbpQuote.body.quoteToken }),
      400,
      "invalid_request_error",
      "FX_QUOTE_INVALID",
    );
    const expiresAt = Date.parse(q.body.expiresAt);
    await waitFor(() => (Date.now() > expiresAt + 5 ? true : undefined));
    const late = await createPayment(sb, { ...EUR_PAYMENT, fxQuoteToken: token });
    expectError(late, 400, "invalid_request_error", "FX_QUOTE_INVALID");
    expect(late.body.error.message).toMatch(/expired/);
  });

  it("checks fast-international-fx against the $50,000 equivalent ceiling", async () => {
    const ok = await createPayment(sb, { ...EUR_PAYMENT, deliveryPreference: "fast-international-fx" });
    expect(ok.status).toBe(201);
    const tooBig = await createPayment(sb, {
      ...EUR_PAYMENT,
      amount: 5_000_000,
      deliveryPreference: "fast-international-fx",
    });
    expectError(tooBig, 400, "invalid_request_error", "VALIDATION_ERROR");
  });
});
