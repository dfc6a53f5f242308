/**
 * The delivery rules, in one place: which delivery preference pays which payee account (its rail),
 * which value is a rail's normal speed and which are its faster variants, what changes when a card
 * funds the payment, and which payments the service's eligibility check applies to. Intake
 * (src/intake/payment-route.ts) and the template's help text (src/templates/template-spec.ts) read
 * these. The sandbox (packages/sandbox) keeps its own reading of the spec on purpose, so that
 * test/unit/delivery/delivery-rules.test.ts compares two readings.
 *
 * From the spec ("Delivery preference rules by originating account kind"):
 * - a preference's rail must match the receiving account's type;
 * - the standard values deliver at the normal speed of the rail; the other values of a rail are faster
 *   variants, each subject to a per-payment eligibility check, never silently downgraded;
 * - a card collects at once, so ACH and wires deliver fast: `standard-ach` and `domestic-wire` are
 *   superseded by `same-day-ach` and `instant-domestic-wire` (the old values are refused), no
 *   eligibility check applies to those two (the card-funded exemption), and a virtual card cannot be
 *   paid from a card.
 *
 * Pure data and functions; only types come from wire-types.ts, so that module can re-export these.
 */
import type { AccountType, DeliveryPreference } from "../payouts-api/wire-types.js";

/**
 * Which delivery preferences pay each receiving account type, the rail's normal speed first.
 * ASSUMPTION: `rtp` is a faster variant of the `ach` rail (it pays a bank account), and an external
 * `card` account has no delivery preference (the spec lists none for it), so it cannot be paid.
 */
export const RAIL_PREFERENCES: Readonly<Record<AccountType, readonly DeliveryPreference[]>> = {
  ach: ["standard-ach", "same-day-ach", "rtp"],
  check: ["standard-check", "express-check", "overnight-check"],
  "domestic-wire": ["domestic-wire", "instant-domestic-wire"],
  "virtual-card": ["virtual-card", "instant-virtual-card"],
  "international-fx": ["international-fx", "fast-international-fx"],
  "international-gusd": ["international-gusd"],
  card: [],
};

/** The normal-speed preference of each payable rail (what a blank `delivery` cell resolves to). */
export const STANDARD_PREFERENCE: Readonly<Partial<Record<AccountType, DeliveryPreference>>> = {
  ach: "standard-ach",
  check: "standard-check",
  "domestic-wire": "domestic-wire",
  "virtual-card": "virtual-card",
  "international-fx": "international-fx",
  "international-gusd": "international-gusd",
};

/**
 * From a card originating account the collect is immediate: ACH and wire deliver fast, so these
 * standard values are refused and the value they map to replaces them.
 */
export const CARD_SUPERSEDED: Readonly<Partial<Record<DeliveryPreference, DeliveryPreference>>> = {
  "standard-ach": "same-day-ach",
  "domestic-wire": "instant-domestic-wire",
};

/**
 * The card-funded exemption: from a card these are the normal speed of their rail (what the superseded
 * values became), so the spec exempts just them from the eligibility check.
 */
export const CARD_NORMAL_SPEEDS: ReadonlySet<DeliveryPreference> = new Set(
  Object.values(CARD_SUPERSEDED) as DeliveryPreference[],
);

/** A virtual-card payee cannot be paid from a card. */
export const CARD_CANNOT_PAY: readonly AccountType[] = ["virtual-card"];

/** Delivery preference → its rail, built once: validation asks for every row of a sheet. */
const RAIL_OF_PREFERENCE: ReadonlyMap<DeliveryPreference, AccountType> = (() => {
  const rails = new Map<DeliveryPreference, AccountType>();
  for (const [rail, prefs] of Object.entries(RAIL_PREFERENCES)) {
    for (const p of prefs) if (!rails.has(p)) rails.set(p, rail as AccountType);
  }
  return rails;
})();

export function railOf(p: DeliveryPreference): AccountType {
  const rail = RAIL_OF_PREFERENCE.get(p);
  /* c8 ignore next */
  if (rail === undefined) throw new Error(`unknown delivery preference ${p}`);
  return rail;
}

/** A faster variant is any preference that is not its rail's normal speed. */
export function isFasterVariant(p: DeliveryPreference): boolean {
  return STANDARD_PREFERENCE[railOf(p)] !== p;
}

/**
 * Whether a payment at `p` funded by an account of type `originatingType` needs the per-payment
 * eligibility check: every faster variant does, except a card's normal speeds (the card-funded
 * exemption). Other faster variants (rtp, fast FX, express checks) are checked from a card too.
 */
export function needsEligibilityCheck(originatingType: AccountType, p: DeliveryPreference): boolean {
  if (!isFasterVariant(p)) return false;
  return !(originatingType === "card" && CARD_NORMAL_SPEEDS.has(p));
}

/** The normal speed of the payee's rail as seen from this paying account (a card's normal ACH is same-day). */
export function standardPreferenceFor(
  originatingType: AccountType,
  receivingType: AccountType,
): DeliveryPreference | undefined {
  const standard = STANDARD_PREFERENCE[receivingType];
  if (!standard) return undefined;
  return originatingType === "card" ? (CARD_SUPERSEDED[standard] ?? standard) : standard;
}

/** The preferences that can pay this payee type from this paying account type. */
export function allowedPreferences(
  originatingType: AccountType,
  receivingType: AccountType,
): DeliveryPreference[] {
  if (originatingType === "card" && CARD_CANNOT_PAY.includes(receivingType)) return [];
  return RAIL_PREFERENCES[receivingType].filter((p) => !(originatingType === "card" && CARD_SUPERSEDED[p]));
}

/** The delivery rules as sentences, for the template's help (and anyone else who explains them). */
export function deliveryRulesInWords(): string {
  const superseded = Object.entries(CARD_SUPERSEDED)
    .map(([old, replacement]) => `${replacement} instead of ${old}`)
    .join(" and ");
  const unpayable = (Object.keys(RAIL_PREFERENCES) as AccountType[]).filter(
    (type) => RAIL_PREFERENCES[type].length === 0,
  );
  return (
    "Blank means the standard speed of the payee's rail. A faster choice must belong to the same rail " +
    "(see the table below) and may be refused if the payment is not eligible; it is never silently " +
    `downgraded. From a card account, use ${superseded}; ` +
    `${CARD_CANNOT_PAY.join(", ")} payees cannot be paid from a card. ` +
    unpayable.map((type) => `A ${type} payee account has no delivery option and cannot be paid.`).join(" ")
  );
}
