/**
 * Currency conversion in the sandbox: a fixed rate table and exact integer arithmetic, so a quote and a
 * payment priced without a quote always agree to the minor unit.
 */

/** Rates are held in millionths (units of foreign currency per USD × 1e6) to keep the math integral. */
interface RateEntry {
  midMicros: number;
  exponent: number;
}

/** Mid-market rates (foreign units per USD) and each currency's minor-unit exponent. */
export const FX_RATES: Readonly<Record<string, RateEntry>> = {
  EUR: { midMicros: 920_000, exponent: 2 },
  GBP: { midMicros: 790_000, exponent: 2 },
  JPY: { midMicros: 151_250_000, exponent: 0 },
  MXN: { midMicros: 17_050_000, exponent: 2 },
  CAD: { midMicros: 1_360_000, exponent: 2 },
  AUD: { midMicros: 1_520_000, exponent: 2 },
  CHF: { midMicros: 880_000, exponent: 2 },
  INR: { midMicros: 83_300_000, exponent: 2 },
  BRL: { midMicros: 5_050_000, exponent: 2 },
  PHP: { midMicros: 56_200_000, exponent: 2 },
};

/** The applied rate gives the payee 0.5% less than mid-market: the provider's spread. */
const SPREAD_PER_MILLE = 5;

export function hasRate(currency: string): boolean {
  return Object.hasOwn(FX_RATES, currency.toUpperCase());
}

export interface FxPrice {
  currency: string;
  foreignAmount: number;
  /** USD minor units debited before fees. */
  usdAmount: number;
  usdToForeignRate: number;
  midMarketRate: number;
}

/**
 * Prices `foreignAmount` minor units of `currency`: USD cents = ceil(foreign major units / applied rate × 100),
 * rounded up so the payee never receives less than asked. Throws for a currency without a rate.
 */
export function priceForeignAmount(currency: string, foreignAmount: number): FxPrice {
  const code = currency.toUpperCase();
  const entry = FX_RATES[code];
  if (!entry) throw new Error(`no rate for ${code}`);
  const appliedMicros = Math.round((entry.midMicros * (1000 - SPREAD_PER_MILLE)) / 1000);
  // usd cents = foreign minor * 100 * 1e6 / (appliedMicros * 10^exponent), rounded up.
  const numerator = BigInt(foreignAmount) * 100n * 1_000_000n;
  const denominator = BigInt(appliedMicros) * 10n ** BigInt(entry.exponent);
  const usdAmount = Number((numerator + denominator - 1n) / denominator);
  return {
    currency: code,
    foreignAmount,
    usdAmount,
    usdToForeignRate: appliedMicros / 1_000_000,
    midMarketRate: entry.midMicros / 1_000_000,
  };
}

export interface StoredQuote {
  token: string;
  entityId: string;
  receivingAccountId: string;
  price: FxPrice;
  expiresAtMs: number;
}

export type QuoteCheck = { ok: true; quote: StoredQuote } | { ok: false; reason: string };

/** Is `quote` usable for a payment of this amount, currency and payee at `nowMs`? */
export function checkQuote(
  quote: StoredQuote | undefined,
  wanted: { entityId: string; receivingAccountId: string; currency: string; amount: number },
  nowMs: number,
): QuoteCheck {
  if (!quote || quote.entityId !== wanted.entityId) return { ok: false, reason: "unknown quote token" };
  if (nowMs >= quote.expiresAtMs) return { ok: false, reason: "quote token has expired; quote again" };
  if (quote.receivingAccountId !== wanted.receivingAccountId)
    return { ok: false, reason: "quote token was issued for another receiving account" };
  if (quote.price.currency !== wanted.currency.toUpperCase())
    return { ok: false, reason: `quote token was issued for ${quote.price.currency}` };
  if (quote.price.foreignAmount !== wanted.amount)
    return { ok: false, reason: `quote token was issued for amount ${quote.price.foreignAmount}` };
  return { ok: true, quote };
}
