/**
 * A valid row of a payout sheet, resolved against the live accounts: everything needed to create its
 * payment, and nothing that depends on the attempt (keys, externalIds and quotes belong to the
 * pipeline). This is the hand-over from intake to the batch pipeline.
 */
import type { DeliveryPreference } from "../payouts-api/wire-types.js";

export interface PayoutInstruction {
  /** Row number as the user sees it in their spreadsheet. */
  rowNumber: number;
  /**
   * The row's identity within the batch: its `reference`, else `#<rowNumber>`. The `#` cannot occur in
   * a reference, so a generated key never collides with a reference written in another row.
   */
  rowKey: string;
  /** The `reference` column, when given; it becomes the payment `externalId`. */
  reference: string | undefined;
  /** Resolved `acct_` ids (the sheet may have named them by externalId). */
  originatingAccountId: string;
  receivingAccountId: string;
  /** What the payee receives, in integer minor units of `currency`. */
  amount: number;
  /** ISO 4217, upper case; the payee account's currency. */
  currency: string;
  deliveryPreference: DeliveryPreference;
  /** The sheet left `delivery` blank and the rail's standard speed was chosen. */
  deliveryResolvedFromBlank: boolean;
  payerMemo: string | undefined;
  recipientNote: string | undefined;
  purpose: string | undefined;
  /** An `att_` id to send as is, or a file (absolute path) to upload once per batch. */
  attachment: { kind: "id"; id: string } | { kind: "file"; path: string } | undefined;
  /** The sheet's own `metadata.<key>` columns (non-blank values only). */
  metadata: Record<string, string>;
  /**
   * A row without a reference: its identity from its content and occurrence (row-identity's
   * contentKeyFor), set when the sheet is validated; the base of its payment's `externalId`.
   */
  contentKey?: string | undefined;
}

/** Metadata keys the pipeline adds to every payment; sheet metadata columns may not use them. */
export { RESERVED_METADATA_KEYS } from "../sheet-columns/index.js";

export function rowKeyOf(reference: string | undefined, rowNumber: number): string {
  return reference && reference.length > 0 ? reference : `#${rowNumber}`;
}
