/**
 * Delivery preferences as the sandbox reads the spec ("Payment creation payload" and "Delivery
 * preference rules by originating account kind"), written apart from the client's reading:
 *
 * - a preference pays one kind of receiving account, its rail; any other account is a 400;
 * - each rail has one normal-speed value (the plain `standard-*` or rail-named value); the rail's
 *   other values are faster variants, which pass a per-payment eligibility check or are refused;
 * - a card originating account collects at once: `standard-ach` and `domestic-wire` are refused in
 *   favour of `same-day-ach` and `instant-domestic-wire`, those two skip the eligibility check, check
 *   values are as from a bank, and a `virtual-card` account cannot be paid.
 *
 * Readings the spec leaves open are in docs/sandbox.md ("Where the spec is ambiguous").
 */
import type { AccountType, DeliveryPreference } from "./wire.js";

interface PreferenceReading {
  /** The receiving account type this value pays. */
  rail: AccountType;
  /** Normal speed of its rail, or a faster variant of it. */
  speed: "normal" | "faster";
}

/**
 * `rtp` (real-time payments) credits a bank account, so it is read as a faster value of the `ach`
 * rail. No value names the `card` account type: an external card account has no rail.
 */
const PREFERENCES: Readonly<Record<DeliveryPreference, PreferenceReading>> = {
  "standard-ach": { rail: "ach", speed: "normal" },
  "same-day-ach": { rail: "ach", speed: "faster" },
  rtp: { rail: "ach", speed: "faster" },
  "standard-check": { rail: "check", speed: "normal" },
  "express-check": { rail: "check", speed: "faster" },
  "overnight-check": { rail: "check", speed: "faster" },
  "domestic-wire": { rail: "domestic-wire", speed: "normal" },
  "instant-domestic-wire": { rail: "domestic-wire", speed: "faster" },
  "virtual-card": { rail: "virtual-card", speed: "normal" },
  "instant-virtual-card": { rail: "virtual-card", speed: "faster" },
  "international-fx": { rail: "international-fx", speed: "normal" },
  "fast-international-fx": { rail: "international-fx", speed: "faster" },
  "international-gusd": { rail: "international-gusd", speed: "normal" },
};

/** From a card, the standard value that is refused and the value to use instead. */
export const CARD_SUPERSEDED: Readonly<Partial<Record<DeliveryPreference, DeliveryPreference>>> = {
  "standard-ach": "same-day-ach",
  "domestic-wire": "instant-domestic-wire",
};

/** Receiving account types a card originating account cannot pay. */
const CARD_CANNOT_PAY: ReadonlySet<AccountType> = new Set(["virtual-card"]);

export function railOf(p: DeliveryPreference): AccountType {
  return PREFERENCES[p].rail;
}

export function isFasterVariant(p: DeliveryPreference): boolean {
  return PREFERENCES[p].speed === "faster";
}

/** The values that pay a receiving account of this type (none for a card). */
export function preferencesFor(receiving: AccountType): DeliveryPreference[] {
  return (Object.keys(PREFERENCES) as DeliveryPreference[]).filter((p) => PREFERENCES[p].rail === receiving);
}

export function cardCannotPay(receiving: AccountType): boolean {
  return CARD_CANNOT_PAY.has(receiving);
}

/**
 * Whether the per-payment eligibility check applies: to every faster variant, except the two values
 * a card must use in place of the superseded standard ones ("no eligibility check applies to these two").
 */
export function needsEligibilityCheck(originating: AccountType, p: DeliveryPreference): boolean {
  if (!isFasterVariant(p)) return false;
  const cardExempt = originating === "card" && Object.values(CARD_SUPERSEDED).includes(p);
  return !cardExempt;
}
