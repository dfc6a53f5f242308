/**
 * Possible duplicates: rows that pay the same payee the same amount from the same account as another
 * row of the sheet, or as a row of an earlier batch within the window (docs/design.md §3.13). Such a
 * row is not paid unless a person confirms it. Also the content key of a row without a reference,
 * which needs the same pass over the sheet (its occurrence among identical rows). Pure: no I/O.
 */
import { hash } from "node:crypto";
import type { PayoutInstruction } from "../intake/payout-instruction.js";
import { formatMinorOrRaw } from "../money/index.js";
import { contentKeyFor } from "../row-identity/index.js";
import { FirstUseIndex } from "./first-use-index.js";

/** The code of a row flagged as a possible duplicate (in the error-code table). */
export const POSSIBLE_DUPLICATE = "POSSIBLE_DUPLICATE";

/** The fields that make two rows the same money to the same payee. */
export type PaymentFields = Pick<
  PayoutInstruction,
  "originatingAccountId" | "receivingAccountId" | "amount" | "currency"
>;

/**
 * The key of what a row pays, for both the sheet's own check and the cross-batch index: 24 hex
 * digits of the sha256 of the paying account, the payee, the amount in minor units and the currency.
 */
export function paymentKeyOf(row: PaymentFields): string {
  const parts = [row.originatingAccountId, row.receivingAccountId, row.amount, row.currency.toUpperCase()];
  // The one-shot hash: about half the time of a Hash object, on every row of every sheet.
  return hash("sha256", JSON.stringify(parts), "hex").slice(0, 24);
}

/** Another row that pays the same: in this sheet (no batch) or in an earlier batch. */
export interface DuplicateMatch {
  batchId?: string | undefined;
  rowNumber: number;
  reference?: string | undefined;
  paymentId?: string | undefined;
  /** When the earlier batch was submitted (ISO). */
  at?: string | undefined;
}

/** How a match is named in a sentence: `row 4 (reference INV-7) of batch b_1, payment pay_9`. */
export function describeMatch(match: DuplicateMatch): string {
  const reference = match.reference ? ` (reference ${match.reference})` : "";
  const batch = match.batchId ? ` of batch ${match.batchId}` : "";
  const at = match.at ? ` submitted ${match.at.slice(0, 10)}` : "";
  const payment = match.paymentId ? `, payment ${match.paymentId}` : "";
  return `row ${match.rowNumber}${reference}${batch}${at}${payment}`;
}

/** How a sheet's possible duplicates are confirmed. */
export const CONFIRM_SHEET_DUPLICATES =
  '--allow-possible-duplicates (API: allowPossibleDuplicates, console: "pay possible duplicates")';

/**
 * The sentence of a possible duplicate: what is the same, where the other rows are, and how to confirm
 * (`confirm`: how a sheet's are, by default; a correction's are confirmed in the console).
 */
export function possibleDuplicateMessage(
  row: PaymentFields,
  matches: readonly DuplicateMatch[],
  confirm = CONFIRM_SHEET_DUPLICATES,
): string {
  const shown = matches.slice(0, 3).map(describeMatch).join("; ");
  const more = matches.length > 3 ? ` and ${matches.length - 3} more` : "";
  return (
    `possible duplicate: ${row.currency} ${formatMinorOrRaw(row.amount, row.currency)} from ` +
    `${row.originatingAccountId} to ${row.receivingAccountId} as ${shown}${more}; if both are meant to ` +
    `be paid, confirm with ${confirm}`
  );
}

/** What the sheet's pass says of one valid row. */
export interface SheetRowCheck {
  /** What the row pays ({@link paymentKeyOf}), for the cross-batch look-up. */
  paymentKey: string;
  /** For a row without a reference: its identity (row-identity's contentKeyFor). */
  contentKey: string | undefined;
  /** An earlier row of the sheet that pays the same. */
  earlier: DuplicateMatch | undefined;
}

/**
 * One pass over a sheet's valid rows in sheet order. Memory stays compact (two {@link FirstUseIndex}es)
 * so a 1,000,000-row sheet is checked within the validation's budget.
 */
export class SheetDuplicates {
  private readonly payments = new FirstUseIndex();
  private readonly contents = new FirstUseIndex();

  check(instruction: PayoutInstruction): SheetRowCheck {
    const paymentKey = paymentKeyOf(instruction);
    const use = this.payments.record(paymentKey, instruction.rowNumber, instruction.reference);
    const earlier = use.occurrence === 1 ? undefined : { rowNumber: use.firstRow, reference: use.firstNote };
    let contentKey: string | undefined;
    if (!instruction.reference) {
      // The content's hash at occurrence 1 names the content; the occurrence is counted per content.
      const content = contentKeyFor(instruction, 1);
      contentKey = contentKeyFor(
        instruction,
        this.contents.record(content, instruction.rowNumber).occurrence,
      );
    }
    return { paymentKey, contentKey, earlier };
  }
}
