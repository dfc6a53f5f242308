/**
 * The rules one row of a payout sheet must pass, as pure functions of the row, the sheet's header and
 * the live context: checkRow runs one check per concern (row-checks.ts) and builds the instruction of
 * a valid row. What needs I/O (the service's eligibility tool, an attachment file on disk, uniqueness
 * across rows) is left to validate-sheet.ts, which calls these.
 */
import type { SheetHeader, SheetRow } from "../sheets/index.js";
import type { LiveContext } from "./live-context.js";
import { type PayoutInstruction, rowKeyOf } from "./payout-instruction.js";
import type { Problem } from "./problems.js";
import {
  checkAccounts,
  checkAmount,
  checkAttachment,
  checkCurrency,
  checkDelivery,
  checkEntityCapability,
  checkFreeText,
  checkMetadata,
  checkReference,
} from "./row-checks.js";
import { readRow } from "./row-reader.js";

export { REFERENCE_MAX, REQUIRED_COLUMNS } from "../sheet-columns/index.js";
export { checkHeader } from "./check-header.js";

export interface RowCheck {
  problems: Problem[];
  /** Present when the row passed every pure rule. */
  instruction?: PayoutInstruction;
  /** A faster variant (other than a card's normal speed): confirm with the service's eligibility tool. */
  needsEligibilityCheck: boolean;
  /** The attachment file to check on disk, when the row names one. */
  attachmentFile?: string;
}

export interface RowCheckContext {
  live: LiveContext;
  header: SheetHeader;
  /** Folder of the sheet: attachment paths are relative to it. */
  sheetDir: string;
}

/** Every pure rule of one row; the problems come in the order of the checks below. */
export function checkRow(row: SheetRow, ctx: RowCheckContext): RowCheck {
  // Reading the row reports cells right of the header and error cells first.
  const r = readRow(row, ctx.header);
  const reference = checkReference(r);
  const accounts = checkAccounts(r, ctx.live);
  const currency = checkCurrency(r, accounts.to);
  const amount = checkAmount(r, currency);
  const route = checkDelivery(r, accounts.usable);
  checkEntityCapability(r, ctx.live, accounts.to);
  const payerMemo = checkFreeText(r, "payer_memo");
  const recipientNote = checkFreeText(r, "recipient_note");
  const purpose = checkFreeText(r, "purpose");
  const metadata = checkMetadata(r);
  const attachment = checkAttachment(r, ctx.sheetDir);

  const problems = r.problems;
  const usable = accounts.usable;
  if (problems.length > 0 || !usable || !route?.ok || currency === undefined || amount === undefined) {
    return { problems, needsEligibilityCheck: false };
  }
  const instruction: PayoutInstruction = {
    rowNumber: row.rowNumber,
    rowKey: rowKeyOf(reference, row.rowNumber),
    reference,
    originatingAccountId: usable.from.id,
    receivingAccountId: usable.to.id,
    amount,
    currency,
    deliveryPreference: route.deliveryPreference,
    deliveryResolvedFromBlank: route.resolvedFromBlank,
    payerMemo,
    recipientNote,
    purpose,
    attachment,
    metadata,
  };
  const needsEligibilityCheck = route.needsEligibilityCheck;
  // Two literals rather than a spread: a row without an attachment file has no `attachmentFile` key.
  return attachment?.kind === "file"
    ? { problems, needsEligibilityCheck, attachmentFile: attachment.path, instruction }
    : { problems, needsEligibilityCheck, instruction };
}
