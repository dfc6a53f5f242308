/**
 * The route of one payout: which delivery preference pays this payee from this paying account, and
 * whether the delivery rules (src/delivery/) allow it. Pure: it reads two accounts and a cell. What
 * this file adds to the rules is the sheet's side: the words people write for a preference, a blank
 * cell, and the sentences that explain a refusal.
 */
import {
  allowedPreferences,
  CARD_CANNOT_PAY,
  CARD_SUPERSEDED,
  needsEligibilityCheck,
  RAIL_PREFERENCES,
  railOf,
  standardPreferenceFor as standardFor,
} from "../delivery/index.js";
import { type Account, DELIVERY_PREFERENCES, type DeliveryPreference } from "../payouts-api/wire-types.js";
import type { ProblemCode } from "./problems.js";

export interface RouteProblem {
  code: ProblemCode;
  message: string;
}

export type Route =
  | {
      ok: true;
      deliveryPreference: DeliveryPreference;
      /** The cell was blank and the payee rail's normal speed was chosen. */
      resolvedFromBlank: boolean;
      /** A faster variant the service must confirm with its eligibility tool (not a card's normal speed). */
      needsEligibilityCheck: boolean;
    }
  | { ok: false; problem: RouteProblem };

/** Words people write for a delivery preference, mapped to the spec's values. */
const DELIVERY_ALIASES: Readonly<Record<string, DeliveryPreference>> = {
  ach: "standard-ach",
  "same-day": "same-day-ach",
  "sameday-ach": "same-day-ach",
  "real-time": "rtp",
  "real-time-payment": "rtp",
  check: "standard-check",
  cheque: "standard-check",
  wire: "domestic-wire",
  "instant-wire": "instant-domestic-wire",
  fx: "international-fx",
  "fast-fx": "fast-international-fx",
  gusd: "international-gusd",
};

const KNOWN_PREFERENCES: ReadonlySet<string> = new Set(DELIVERY_PREFERENCES);

/** `Same Day ACH`, `same_day_ach` and `same-day-ach` all mean `same-day-ach`. */
export function normalizeDeliveryPreference(cell: string): DeliveryPreference | undefined {
  // Most cells already hold a spec value as written: answer those without building a new string.
  if (KNOWN_PREFERENCES.has(cell)) return cell as DeliveryPreference;
  const key = cell
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, "-");
  if (KNOWN_PREFERENCES.has(key)) return key as DeliveryPreference;
  return Object.hasOwn(DELIVERY_ALIASES, key) ? DELIVERY_ALIASES[key] : undefined;
}

export function isCardAccount(account: Account): boolean {
  return account.type === "card";
}

/** The normal speed of the payee's rail as seen from this paying account (a card's normal ACH is same-day). */
export function standardPreferenceFor(from: Account, to: Account): DeliveryPreference | undefined {
  return standardFor(from.type, to.type);
}

export function resolveRoute(from: Account, to: Account, deliveryCell: string): Route {
  const railValues = RAIL_PREFERENCES[to.type];
  if (railValues.length === 0) {
    return fail(
      "TO_ACCOUNT_NO_RAIL",
      `payee ${label(to)} is a ${to.type} account, which no delivery preference can pay; choose another payee account`,
    );
  }
  const fromCard = isCardAccount(from);
  if (fromCard && CARD_CANNOT_PAY.includes(to.type)) {
    return fail(
      "DELIVERY_VIRTUAL_CARD_FROM_CARD",
      `a virtual card (${label(to)}) cannot be paid from a card account (${label(from)}); pay it from a bank account`,
    );
  }

  let preference: DeliveryPreference;
  const blank = deliveryCell.trim() === "";
  if (blank) {
    preference = standardPreferenceFor(from, to)!;
  } else {
    const normalized = normalizeDeliveryPreference(deliveryCell);
    if (!normalized) {
      return fail(
        "DELIVERY_UNKNOWN",
        `"${deliveryCell.trim()}" is not a delivery preference; for a ${to.type} payee use one of: ${allowedFor(from, to).join(", ")} (or leave it blank for the standard speed)`,
      );
    }
    preference = normalized;
  }

  if (railOf(preference) !== to.type) {
    return fail(
      "DELIVERY_RAIL_MISMATCH",
      `${preference} cannot pay ${label(to)}, a ${to.type} account; use one of: ${allowedFor(from, to).join(", ")}`,
    );
  }
  const replacement = fromCard ? CARD_SUPERSEDED[preference] : undefined;
  if (replacement) {
    return fail(
      "DELIVERY_SUPERSEDED_FOR_CARD",
      `${preference} is not accepted from a card account (${label(from)}): card payments are collected at once, so use ${replacement}`,
    );
  }
  return {
    ok: true,
    deliveryPreference: preference,
    resolvedFromBlank: blank,
    needsEligibilityCheck: needsEligibilityCheck(from.type, preference),
  };
}

/** The preferences that can pay this payee from this account, for error messages. */
export function allowedFor(from: Account, to: Account): DeliveryPreference[] {
  return allowedPreferences(from.type, to.type);
}

export function label(account: Account): string {
  return account.externalId ? `${account.externalId} (${account.id})` : account.id;
}

function fail(code: ProblemCode, message: string): Route {
  return { ok: false, problem: { code, message } };
}
