/**
 * Two readings of the spec's delivery rules must agree: the client's (src/delivery/, used by intake)
 * and the sandbox's own (@payouts/sandbox). For every paying account kind, payee rail and delivery
 * preference, intake's verdict (valid, and whether the eligibility tool must confirm it) is what the
 * sandbox answers for the same payment. The template's help states the client's rules.
 */

import { checkPaymentRules, FAST_INELIGIBLE_METADATA_KEY } from "@payouts/sandbox";
import { describe, expect, it } from "vitest";
import {
  CARD_SUPERSEDED,
  deliveryRulesInWords,
  isFasterVariant,
  needsEligibilityCheck,
  RAIL_PREFERENCES,
} from "../../../src/delivery/index.js";
import { resolveRoute } from "../../../src/intake/payment-route.js";
import {
  type Account,
  type AccountType,
  DELIVERY_PREFERENCES,
  type PaymentCreate,
} from "../../../src/payouts-api/wire-types.js";
import { INSTRUCTION_NOTES } from "../../../src/templates/template-spec.js";

const now = "2026-01-01T00:00:00.000Z";
const account = (
  id: string,
  ownershipType: "internal" | "external",
  type: AccountType,
  extra = {},
): Account => ({
  id,
  ownershipType,
  type,
  createdAt: now,
  updatedAt: now,
  ...extra,
});
const payers = [
  account("acct_bank", "internal", "ach", { isVerified: true }),
  account("acct_card", "internal", "card"),
];
// FX payees need a quote and another payload shape: their rail is covered by the intake tests.
const payeeTypes = (Object.keys(RAIL_PREFERENCES) as AccountType[]).filter((t) => t !== "international-fx");

function sandboxAccepts(from: Account, to: Account, pref: (typeof DELIVERY_PREFERENCES)[number]): boolean {
  const body = {
    amount: 1000,
    currency: "USD",
    deliveryPreference: pref,
    originatingAccountId: from.id,
    receivingAccountId: to.id,
  } as PaymentCreate;
  try {
    checkPaymentRules(body, from, to);
    return true;
  } catch {
    return false;
  }
}

describe("intake and the sandbox apply the same delivery rules", () => {
  it("agree on every paying account, payee rail and preference", () => {
    for (const from of payers) {
      for (const type of payeeTypes) {
        const to = account(`acct_payee_${type}`, "external", type);
        // A payee the sandbox never finds eligible: a payment passes only when no eligibility check applies.
        const ineligible = account(`acct_payee_${type}_x`, "external", type, {
          metadata: { [FAST_INELIGIBLE_METADATA_KEY]: "true" },
        });
        for (const pref of DELIVERY_PREFERENCES) {
          const route = resolveRoute(from, to, pref);
          const intake = route.ok
            ? route.needsEligibilityCheck
              ? "valid, check eligibility"
              : "valid"
            : "refused";
          const sandbox = !sandboxAccepts(from, to, pref)
            ? "refused"
            : sandboxAccepts(from, ineligible, pref)
              ? "valid"
              : "valid, check eligibility";
          expect([from.type, type, pref, intake]).toEqual([from.type, type, pref, sandbox]);
        }
      }
    }
  });

  it("exempt exactly a card's normal speeds from the eligibility check", () => {
    for (const pref of DELIVERY_PREFERENCES) {
      expect([pref, needsEligibilityCheck("ach", pref)]).toEqual([pref, isFasterVariant(pref)]);
      const cardNormal = Object.values(CARD_SUPERSEDED).includes(pref);
      expect([pref, needsEligibilityCheck("card", pref)]).toEqual([
        pref,
        isFasterVariant(pref) && !cardNormal,
      ]);
    }
  });
});

describe("the template's help states the delivery rules", () => {
  it("uses the rules' own words, naming every card replacement", () => {
    const note = INSTRUCTION_NOTES.find((n) => n.topic === "Delivery")?.text;
    expect(note).toBe(deliveryRulesInWords());
    for (const [old, replacement] of Object.entries(CARD_SUPERSEDED)) {
      expect(note).toContain(`${replacement} instead of ${old}`);
    }
    expect(note).toContain("A card payee account has no delivery option");
  });
});
