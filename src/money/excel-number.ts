/**
 * Renders a number the way Excel shows it: at most 15 significant digits, as a plain decimal string
 * without exponent. Excel stores IEEE doubles but never displays more than 15 significant digits, so a
 * formula result of `0.1+0.2` (0.30000000000000004) is "0.3", exactly what the user sees in the cell.
 *
 * `1e21` → "1000000000000000000000", `1.5e-7` → "0.00000015", `-0` → "0".
 */
export function excelNumberText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  if (value === 0) return "0";
  // toExponential(14) rounds to 15 significant digits exactly like toPrecision(15), but always in the
  // d.dddddddddddddde±x shape, which is simpler to re-render without an exponent.
  const [mantissa = "", exponentText = "0"] = value.toExponential(14).split("e");
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "").replace(/0+$/, "") || "0";
  const integerDigitCount = Number(exponentText) + 1;
  let plain: string;
  if (integerDigitCount <= 0) plain = `0.${"0".repeat(-integerDigitCount)}${digits}`;
  else if (integerDigitCount >= digits.length) plain = digits + "0".repeat(integerDigitCount - digits.length);
  else plain = `${digits.slice(0, integerDigitCount)}.${digits.slice(integerDigitCount)}`;
  return negative ? `-${plain}` : plain;
}

/**
 * True when a number is an integer that Excel could not have stored exactly as typed: more than 15
 * digits (a 16–19 digit account or card id typed into a General cell). Such a cell must be refused, not
 * read, because its last digits are already gone.
 */
export function isLossyInteger(value: number): boolean {
  return Number.isInteger(value) && Math.abs(value) >= 1e15;
}
