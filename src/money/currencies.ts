/**
 * ISO 4217 minor-unit exponents of the active currency codes (list 1 of the standard, 2025), plus the
 * currency symbols that may decorate an amount typed as text.
 *
 * The exponent says how many decimals a currency has (USD 2: 12.34 is 1234 minor units; JPY 0; KWD 3).
 * An amount with more decimals than its currency's exponent is refused, never rounded.
 */

const EXPONENT_0 = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF";
const EXPONENT_3 = "BHD IQD JOD KWD LYD OMR TND";
const EXPONENT_4 = "CLF UYW";
const EXPONENT_2 =
  "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD " +
  "CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP " +
  "GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL " +
  "MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN " +
  "QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD " +
  "TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG";

const EXPONENTS: ReadonlyMap<string, number> = new Map(
  (
    [
      [EXPONENT_0, 0],
      [EXPONENT_2, 2],
      [EXPONENT_3, 3],
      [EXPONENT_4, 4],
    ] as const
  ).flatMap(([codes, exponent]) => codes.split(" ").map((code) => [code, exponent] as const)),
);

/** Minor-unit exponent of an ISO 4217 code (case-insensitive); `undefined` for an unknown code. */
export function currencyExponent(code: string): number | undefined {
  // Most callers pass a code as listed ("USD"): look it up as is before normalising it.
  return EXPONENTS.get(code) ?? EXPONENTS.get(code.trim().toUpperCase());
}

/** Every known ISO 4217 code, upper case. */
export function knownCurrencyCodes(): string[] {
  return [...EXPONENTS.keys()];
}

/**
 * Currency symbols accepted around an amount, and the codes each may stand for. A symbol shared by several
 * currencies (`$`, `kr`, `¥`) is accepted for any of them: the row's `currency` column decides which one is
 * paid; the symbol only has to be consistent with it. Longer symbols come first so `R$` is not read as `R`.
 */
const SYMBOLS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["US$", ["USD"]],
  ["CA$", ["CAD"]],
  ["AU$", ["AUD"]],
  ["NZ$", ["NZD"]],
  ["HK$", ["HKD"]],
  ["MX$", ["MXN"]],
  ["R$", ["BRL"]],
  ["C$", ["CAD"]],
  ["A$", ["AUD"]],
  ["S$", ["SGD"]],
  ["$", ["USD", "CAD", "AUD", "NZD", "HKD", "SGD", "MXN", "TWD", "ARS", "CLP", "COP"]],
  ["€", ["EUR"]],
  ["£", ["GBP"]],
  ["¥", ["JPY", "CNY"]],
  ["￥", ["JPY", "CNY"]],
  ["₩", ["KRW"]],
  ["₹", ["INR"]],
  ["₽", ["RUB"]],
  ["₺", ["TRY"]],
  ["₪", ["ILS"]],
  ["₫", ["VND"]],
  ["₱", ["PHP"]],
  ["฿", ["THB"]],
  ["₴", ["UAH"]],
  ["₦", ["NGN"]],
  ["zł", ["PLN"]],
  ["Kč", ["CZK"]],
  ["Ft", ["HUF"]],
  ["kr.", ["DKK", "SEK", "NOK", "ISK"]],
  ["kr", ["DKK", "SEK", "NOK", "ISK"]],
  ["Fr.", ["CHF"]],
  ["CHF", ["CHF"]],
];

/** The symbols in the order they must be tried (longest first). */
export const CURRENCY_SYMBOLS: ReadonlyArray<readonly [string, readonly string[]]> = SYMBOLS;

/** Preferred display symbol of a currency, used by tests and messages; `undefined` when it has none. */
export function currencySymbol(code: string): string | undefined {
  const upper = code.toUpperCase();
  const preferred: Record<string, string> = { USD: "$", EUR: "€", GBP: "£", JPY: "¥", KRW: "₩", INR: "₹" };
  return preferred[upper] ?? SYMBOLS.find(([, codes]) => codes[0] === upper)?.[0];
}
