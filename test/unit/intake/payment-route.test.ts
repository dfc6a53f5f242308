import { describe, expect, it } from "vitest";
import { normalizeDeliveryPreference, resolveRoute } from "../../../src/intake/payment-route.js";
import type { Account, AccountType } from "../../../src/payouts-api/wire-types.js";

const now = "2026-01-01T00:00:00.000Z";
function account(
  id: string,
  ownershipType: "internal" | "external",
  type: AccountType,
  extra: Partial<Account> = {},
): Account {
  return {
    id,
    ownershipType,
    type,
    externalId: id.replace("acct_", ""),
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
}
const bank = account("acct_bank", "internal", "ach", { isVerified: true });
const card = account("acct_card", "internal", "card");
const payee = {
  ach: account("acct_p_ach", "external", "ach"),
  check: account("acct_p_check", "external", "check"),
  wire: account("acct_p_wire", "external", "domestic-wire"),
  vcard: account("acct_p_vcard", "external", "virtual-card"),
  card: account("acct_p_card", "external", "card"),
  fx: account("acct_p_eur", "external", "international-fx", {
    international: { currency: "EUR", accountNumberLast4: "1234", address: {} },
  }),
  gusd: account("acct_p_gusd", "external", "international-gusd"),
};

describe("resolveRoute", () => {
  it("resolves a blank delivery to the normal speed of the payee's rail", () => {
    const cases: Array<[Account, string]> = [
      [payee.ach, "standard-ach"],
      [payee.check, "standard-check"],
      [payee.wire, "domestic-wire"],
      [payee.vcard, "virtual-card"],
      [payee.fx, "international-fx"],
      [payee.gusd, "international-gusd"],
    ];
    for (const [to, expected] of cases) {
      const route = resolveRoute(bank, to, "  ");
      expect(route).toEqual({
        ok: true,
        deliveryPreference: expected,
        resolvedFromBlank: true,
        needsEligibilityCheck: false,
      });
    }
  });

  it("resolves a blank delivery from a card to the fast values a card must use", () => {
    expect(resolveRoute(card, payee.ach, "")).toMatchObject({ ok: true, deliveryPreference: "same-day-ach" });
    expect(resolveRoute(card, payee.wire, "")).toMatchObject({
      ok: true,
      deliveryPreference: "instant-domestic-wire",
    });
    expect(resolveRoute(card, payee.check, "")).toMatchObject({
      ok: true,
      deliveryPreference: "standard-check",
    });
  });

  it("refuses a preference whose rail does not match the payee, listing what would work", () => {
    const route = resolveRoute(bank, payee.check, "rtp");
    expect(route.ok).toBe(false);
    if (!route.ok) {
      expect(route.problem.code).toBe("DELIVERY_RAIL_MISMATCH");
      expect(route.problem.message).toContain("standard-check, express-check, overnight-check");
    }
  });

  it("refuses the superseded standard values from a card and names the replacement", () => {
    for (const [to, value, replacement] of [
      [payee.ach, "standard-ach", "same-day-ach"],
      [payee.wire, "domestic-wire", "instant-domestic-wire"],
    ] as const) {
      const route = resolveRoute(card, to, value);
      expect(route).toMatchObject({ ok: false, problem: { code: "DELIVERY_SUPERSEDED_FOR_CARD" } });
      if (!route.ok) expect(route.problem.message).toContain(replacement);
    }
  });

  it("refuses a virtual card paid from a card", () => {
    expect(resolveRoute(card, payee.vcard, "virtual-card")).toMatchObject({
      ok: false,
      problem: { code: "DELIVERY_VIRTUAL_CARD_FROM_CARD" },
    });
  });

  it("refuses a payee no rail can pay", () => {
    expect(resolveRoute(bank, payee.card, "")).toMatchObject({
      ok: false,
      problem: { code: "TO_ACCOUNT_NO_RAIL" },
    });
  });

  it("asks for an eligibility check only for faster variants from a bank account", () => {
    expect(resolveRoute(bank, payee.ach, "same-day-ach")).toMatchObject({
      ok: true,
      needsEligibilityCheck: true,
    });
    expect(resolveRoute(bank, payee.ach, "rtp")).toMatchObject({ ok: true, needsEligibilityCheck: true });
    expect(resolveRoute(bank, payee.fx, "fast-international-fx")).toMatchObject({
      ok: true,
      needsEligibilityCheck: true,
    });
    expect(resolveRoute(bank, payee.ach, "standard-ach")).toMatchObject({
      ok: true,
      needsEligibilityCheck: false,
    });
    expect(resolveRoute(card, payee.ach, "same-day-ach")).toMatchObject({
      ok: true,
      needsEligibilityCheck: false,
    });
    expect(resolveRoute(card, payee.wire, "instant-domestic-wire")).toMatchObject({
      ok: true,
      needsEligibilityCheck: false,
    });
  });

  it("names an unknown delivery value and what the payee accepts", () => {
    const route = resolveRoute(bank, payee.ach, "carrier pigeon");
    expect(route).toMatchObject({ ok: false, problem: { code: "DELIVERY_UNKNOWN" } });
    if (!route.ok) expect(route.problem.message).toContain('"carrier pigeon"');
  });
});

describe("normalizeDeliveryPreference", () => {
  it("accepts the spelling people type", () => {
    expect(normalizeDeliveryPreference("Same Day ACH")).toBe("same-day-ach");
    expect(normalizeDeliveryPreference("same_day_ach")).toBe("same-day-ach");
    expect(normalizeDeliveryPreference(" RTP ")).toBe("rtp");
    expect(normalizeDeliveryPreference("Instant Wire")).toBe("instant-domestic-wire");
    expect(normalizeDeliveryPreference("cheque")).toBe("standard-check");
    expect(normalizeDeliveryPreference("overnight")).toBeUndefined();
  });

  it("does not take an object's built-in names for delivery values", () => {
    // A cell reading "constructor" must be an unknown value, not crash the sheet's validation.
    for (const cell of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(normalizeDeliveryPreference(cell), cell).toBeUndefined();
      expect(resolveRoute(bank, payee.ach, cell)).toMatchObject({
        ok: false,
        problem: { code: "DELIVERY_UNKNOWN" },
      });
    }
  });
});
