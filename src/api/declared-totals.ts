/** Declared control totals in requests and answers (upload fields, submit body, the upload's view). */
import type { z } from "zod";
import { type DeclaredTotals, declaredTotalsOf } from "../intake/index.js";
import { formatMinorOrRaw } from "../money/index.js";
import { ApiError } from "./api-error.js";
import type { DeclaredTotalsView } from "./schemas.js";

/** Declared control totals as the API shows them: rows, and `CUR:amount` per currency. */
export function declaredView(declared: DeclaredTotals | undefined): z.output<typeof DeclaredTotalsView> {
  if (!declared) return null;
  return {
    rows: declared.rows ?? null,
    totals: Object.entries(declared.amounts ?? {}).map(([currency, minor]) => ({
      currency,
      amount: formatMinorOrRaw(minor, currency),
    })),
  };
}

/** The declared totals of a request (`expectRows`, `expectTotals`); a malformed one is a 400 naming the field. */
export function declaredFromRequest(
  rows: number | undefined,
  totals: readonly string[] | undefined,
): DeclaredTotals | undefined {
  try {
    return declaredTotalsOf(rows, totals ?? []);
  } catch (err) {
    throw new ApiError(400, "INVALID_REQUEST", `expectTotals: ${(err as Error).message}`);
  }
}
