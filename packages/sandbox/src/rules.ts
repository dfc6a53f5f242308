/**
 * Pure business rules of the sandbox: fast-payment eligibility, fees, delivery estimates and the
 * amount trigger values that decide how a payment ends. No I/O, no state: each is testable alone.
 */
import { isFasterVariant } from "./delivery.js";
import type { Account, DeliveryPreference, Fee, PaymentStatus } from "./wire.js";

/** Eligibility ceilings, in USD minor units. */
export const ELIGIBILITY_LIMITS = {
  rtp: 10_000_000, // $100,000.00
  "same-day-ach": 100_000_000, // $1,000,000.00
  "fast-international-fx": 5_000_000, // $50,000.00 USD equivalent
} as const;

/** External accounts whose metadata carries this key with value "true" are never fast-eligible. */
export const FAST_INELIGIBLE_METADATA_KEY = "sandboxFastIneligible";

export interface EligibilityInput {
  deliveryPreference: DeliveryPreference;
  /** USD minor units (the debit; for FX the USD equivalent). */
  usdAmount: number;
  originating: Pick<Account, "type" | "isVerified">;
  receiving: Pick<Account, "metadata">;
}

export interface EligibilityResult {
  eligible: boolean;
  reasons: { code: string; message: string }[];
}

/**
 * The one eligibility rule, shared by the fast-payment-eligibility tool and payment creation:
 * standard speeds are always eligible; a faster variant is refused for a payee flagged
 * `sandboxFastIneligible`, from an unverified bank account, or above its rail's ceiling.
 */
export function fastPaymentEligibility(input: EligibilityInput): EligibilityResult {
  const { deliveryPreference: pref } = input;
  if (!isFasterVariant(pref)) return { eligible: true, reasons: [] };
  const reasons: EligibilityResult["reasons"] = [];
  if (input.receiving.metadata?.[FAST_INELIGIBLE_METADATA_KEY] === "true") {
    reasons.push({
      code: "RECEIVER_NOT_ELIGIBLE",
      message: `The receiving account is not eligible for ${pref}.`,
    });
  }
  if (input.originating.type === "ach" && input.originating.isVerified !== true) {
    reasons.push({ code: "ACCOUNT_NOT_VERIFIED", message: "The originating bank account is not verified." });
  }
  const limit = (ELIGIBILITY_LIMITS as Record<string, number>)[pref];
  if (limit !== undefined && input.usdAmount > limit) {
    reasons.push({
      code: "AMOUNT_ABOVE_LIMIT",
      message: `${pref} is available up to ${formatUsd(limit)} (USD equivalent); this payment is ${formatUsd(input.usdAmount)}.`,
    });
  }
  return { eligible: reasons.length === 0, reasons };
}

function formatUsd(cents: number): string {
  return `$${(cents / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** Fixed originator-side fee per delivery preference, in USD cents. */
export const RAIL_FEES_USD: Readonly<Record<DeliveryPreference, number>> = {
  "standard-ach": 25,
  "same-day-ach": 100,
  rtp: 150,
  "standard-check": 150,
  "express-check": 500,
  "overnight-check": 1500,
  "domestic-wire": 1500,
  "instant-domestic-wire": 2500,
  "virtual-card": 50,
  "instant-virtual-card": 150,
  "international-fx": 500,
  "fast-international-fx": 1500,
  "international-gusd": 300,
};

/** Card-funded payments also pay a processing fee: 2.9% of the USD debit, rounded up. */
export const CARD_PROCESSING_PER_MILLE = 29;

/** Fees recorded when a payment moves to in-progress (and returned by the fee calculator). */
export function feesFor(input: {
  deliveryPreference: DeliveryPreference;
  usdAmount: number;
  originatingType: Account["type"];
}): Fee[] {
  const fees: Fee[] = [
    {
      type: "rail",
      amount: RAIL_FEES_USD[input.deliveryPreference],
      currency: "USD",
      chargeTo: "originator",
    },
  ];
  if (input.originatingType === "card") {
    fees.push({
      type: "card-processing",
      amount: Math.ceil((input.usdAmount * CARD_PROCESSING_PER_MILLE) / 1000),
      currency: "USD",
      chargeTo: "originator",
    });
  }
  return fees;
}

/** Business days from submission to delivery, per preference. */
export const DELIVERY_BUSINESS_DAYS: Readonly<Record<DeliveryPreference, number>> = {
  "standard-ach": 3,
  "same-day-ach": 0,
  rtp: 0,
  "standard-check": 7,
  "express-check": 3,
  "overnight-check": 1,
  "domestic-wire": 1,
  "instant-domestic-wire": 0,
  "virtual-card": 1,
  "instant-virtual-card": 0,
  "international-fx": 3,
  "fast-international-fx": 1,
  "international-gusd": 2,
};

/** Adds business days (Saturday and Sunday skipped; no holidays) to a UTC date; returns YYYY-MM-DD. */
export function estimateDeliveryDate(pref: DeliveryPreference, from: Date): string {
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  const isWeekend = () => d.getUTCDay() === 0 || d.getUTCDay() === 6;
  while (isWeekend()) d.setUTCDate(d.getUTCDate() + 1);
  let days = DELIVERY_BUSINESS_DAYS[pref];
  while (days > 0) {
    d.setUTCDate(d.getUTCDate() + 1);
    if (!isWeekend()) days--;
  }
  return d.toISOString().slice(0, 10);
}

/**
 * Trigger values on the payment `amount` (minor units of the payment currency):
 * ending in 13 → the payment fails after in-progress; ending in 77 → stays `scheduled` (under review)
 * forever; ending in 555 → completes, then is returned (reported `failed`, as an ACH return);
 * anything else completes.
 */
export type PaymentOutcome = "complete" | "fail" | "hold" | "return";
export function outcomeForAmount(amount: number): PaymentOutcome {
  const lastTwo = amount % 100;
  if (lastTwo === 13) return "fail";
  if (lastTwo === 77) return "hold";
  if (amount % 1000 === 555) return "return";
  return "complete";
}

/** Why a returned payment came back, unless the return request names another reason. */
export const DEFAULT_RETURN_REASON = {
  code: "R01",
  message: "insufficient funds: the receiving bank returned the payment",
} as const;

export function finalStatusFor(outcome: PaymentOutcome): PaymentStatus {
  return outcome === "fail" ? "failed" : "completed";
}
