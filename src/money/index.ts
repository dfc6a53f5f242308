export { CURRENCY_SYMBOLS, currencyExponent, currencySymbol, knownCurrencyCodes } from "./currencies.js";
export { excelNumberText, isLossyInteger } from "./excel-number.js";
export type { AmountConvention, AmountErrorCode, ParsedAmount } from "./parse-amount.js";
export {
  AmountConventionTally,
  amountConventionEvidence,
  formatMinor,
  formatMinorOrRaw,
  parseAmount,
} from "./parse-amount.js";
