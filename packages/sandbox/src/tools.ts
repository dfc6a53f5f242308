/** The calculator endpoints under /tools: they create no resource (except a short-lived quote token). */
import { preferencesFor } from "./delivery.js";
import { badRequest, parseOrThrow, validationError } from "./errors.js";
import { hasRate, priceForeignAmount } from "./fx.js";
import { newId } from "./ids.js";
import { accountOf } from "./payments.js";
import { estimateDeliveryDate, fastPaymentEligibility, feesFor } from "./rules.js";
import type { SandboxState } from "./state.js";
import {
  type Account,
  accountCurrency,
  type DeliveryEstimate,
  DeliveryEstimateRequest,
  type DeliveryPreference,
  type FastPaymentEligibility,
  FastPaymentEligibilityRequest,
  FeeCalculatorRequest,
  type FeeCalculatorResult,
  type FxQuote,
  FxQuoteRequest,
} from "./wire.js";

export const DEFAULT_FX_QUOTE_TTL_MS = 5 * 60 * 1000;

export function fxQuote(state: SandboxState, entityId: string, rawBody: unknown, ttlMs: number): FxQuote {
  const body = parseOrThrow(FxQuoteRequest, rawBody);
  const account = accountOf(state, entityId, body.receivingAccountId, "receivingAccountId");
  const currency = accountCurrency(account);
  if (account.ownershipType !== "external" || account.type !== "international-fx" || currency === "USD") {
    throw validationError(
      "only an external international-fx account in a currency other than USD can be quoted",
      [
        {
          path: "receivingAccountId",
          message: `a ${account.type} account paid in ${currency} does not convert`,
        },
      ],
    );
  }
  if (body.currency !== undefined && body.currency.toUpperCase() !== currency) {
    throw validationError(
      `currency ${body.currency.toUpperCase()} does not match the account's currency ${currency}`,
      [{ path: "currency", message: `must be ${currency}` }],
    );
  }
  if (!hasRate(currency)) {
    throw badRequest("UNSUPPORTED_CURRENCY", `the sandbox has no rate for ${currency}`, {
      fields: [{ path: "currency", message: "unsupported" }],
    });
  }
  const price = priceForeignAmount(currency, body.amount);
  const expiresAtMs = state.now() + ttlMs;
  const token = newId("fxq");
  state.quotes.set(token, { token, entityId, receivingAccountId: account.id, price, expiresAtMs });
  // Expired quotes are useless; drop them so a long-running sandbox does not grow. A Map keeps
  // insertion order and every quote gets the same lifetime, so the oldest come first: stop at the
  // first one still kept, instead of walking every quote of the last minutes on each request (about
  // 20,000 at a 1M-row bench's rate). A quote's expiry is checked when it is used (fx.ts checkQuote),
  // so one left here a little longer is only memory.
  const now = state.now();
  for (const [t, q] of state.quotes) {
    if (q.expiresAtMs + 60_000 >= now) break;
    state.quotes.delete(t);
  }
  return {
    currency,
    foreignAmount: price.foreignAmount,
    amount: price.usdAmount,
    usdToForeignRate: price.usdToForeignRate,
    midMarketRate: price.midMarketRate,
    quoteToken: token,
    expiresAt: new Date(expiresAtMs).toISOString(),
  };
}

function assertRail(pref: DeliveryPreference, receiving: Account, code = "VALIDATION_ERROR"): void {
  if (!preferencesFor(receiving.type).includes(pref)) {
    throw badRequest(code, `deliveryPreference ${pref} does not pay a ${receiving.type} account`, {
      fields: [{ path: "deliveryPreference", message: `does not match account type ${receiving.type}` }],
    });
  }
}

/** USD minor units for an amount in the payee's currency (converted at the current rate). */
function usdEquivalent(amount: number, receiving: Account): number {
  const currency = accountCurrency(receiving);
  if (currency === "USD") return amount;
  if (!hasRate(currency)) throw badRequest("UNSUPPORTED_CURRENCY", `the sandbox has no rate for ${currency}`);
  return priceForeignAmount(currency, amount).usdAmount;
}

export function feeCalculator(state: SandboxState, entityId: string, rawBody: unknown): FeeCalculatorResult {
  const body = parseOrThrow(FeeCalculatorRequest, rawBody);
  const originating = accountOf(state, entityId, body.originatingAccountId, "originatingAccountId");
  const receiving = accountOf(state, entityId, body.receivingAccountId, "receivingAccountId");
  assertRail(body.deliveryPreference, receiving, "FEE_CALCULATION_FAILED");
  return {
    fees: feesFor({
      deliveryPreference: body.deliveryPreference,
      usdAmount: usdEquivalent(body.amount, receiving),
      originatingType: originating.type,
    }),
  };
}

export function fastPaymentEligibilityTool(
  state: SandboxState,
  entityId: string,
  rawBody: unknown,
): FastPaymentEligibility {
  const body = parseOrThrow(FastPaymentEligibilityRequest, rawBody);
  const originating = accountOf(state, entityId, body.originatingAccountId, "originatingAccountId");
  const receiving = accountOf(state, entityId, body.receivingAccountId, "receivingAccountId");
  if (originating.ownershipType !== "internal" || receiving.ownershipType !== "external") {
    throw badRequest("INVALID_ACCOUNT_TYPE", "originating must be internal and receiving external");
  }
  assertRail(body.deliveryPreference, receiving);
  // Card-funded ACH and wire are fast by nature; the payment rules skip eligibility for them.
  if (
    originating.type === "card" &&
    (body.deliveryPreference === "same-day-ach" || body.deliveryPreference === "instant-domestic-wire")
  ) {
    return { eligible: true, reasons: [] };
  }
  return fastPaymentEligibility({
    deliveryPreference: body.deliveryPreference,
    usdAmount: usdEquivalent(body.amount, receiving),
    originating,
    receiving,
  });
}

export function deliveryEstimate(state: SandboxState, entityId: string, rawBody: unknown): DeliveryEstimate {
  const body = parseOrThrow(DeliveryEstimateRequest, rawBody);
  accountOf(state, entityId, body.originatingAccountId, "originatingAccountId");
  const receiving = accountOf(state, entityId, body.receivingAccountId, "receivingAccountId");
  assertRail(body.deliveryPreference, receiving);
  return {
    deliveryPreference: body.deliveryPreference,
    estimatedDeliveryDate: estimateDeliveryDate(body.deliveryPreference, new Date(state.now())),
  };
}
