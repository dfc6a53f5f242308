/**
 * The payout sheet's columns, described once: which are required, the other headers people write for
 * them, and the most characters a value may hold. Everything else is built from or tested against
 * this table: the header matching (src/sheets/header.ts), the intake checks (src/intake/), the
 * template and its Instructions sheet (src/templates/), and docs/operating.md's column table
 * (test/unit/templates/sheet-columns.test.ts fails when one of them disagrees).
 *
 * Pure data; it depends on the service's own limits (wire-types.ts) and nothing else.
 */
import {
  EXTERNAL_ID_MAX,
  METADATA_KEY_MAX,
  METADATA_MAX_KEYS,
  METADATA_VALUE_MAX,
  TEXT_LIMITS,
} from "../payouts-api/wire-types.js";

/**
 * A reference becomes the payment externalId (at most {@link EXTERNAL_ID_MAX} characters in the spec),
 * and an operator retry appends `-r<attempt>`: 200 leaves room for that.
 */
export const REFERENCE_MAX = 200;

export interface SheetColumnRule {
  /** Required: without this column no row can be paid, and the sheet is refused (COLUMN_MISSING). */
  required: boolean;
  /** Other headers that mean this column (matched ignoring case, spaces, `_`, `-`, `.`, a trailing `*`). */
  aliases: readonly string[];
  /** The most characters a value may hold; longer values make the row invalid. */
  maxLength?: number;
}

/**
 * Our columns, in the template's order. `reference` is optional (a row without one is known by its row
 * number) but recommended: it is what makes a payout recognisable in the service and in every report.
 */
export const SHEET_COLUMN_RULES = {
  reference: {
    required: false,
    aliases: [
      "ref",
      "payment reference",
      "payout reference",
      "reference id",
      "external id",
      "your reference",
    ],
    maxLength: REFERENCE_MAX,
  },
  from_account: {
    required: true,
    aliases: [
      "from",
      "funding account",
      "source account",
      "paying account",
      "debit account",
      "originating account",
      "from acct",
    ],
  },
  to_account: {
    required: true,
    aliases: [
      "to",
      "payee",
      "payee account",
      "recipient account",
      "beneficiary account",
      "destination account",
      "receiving account",
      "to acct",
    ],
  },
  amount: { required: true, aliases: ["sum", "payout amount", "payment amount", "amt"] },
  currency: { required: false, aliases: ["ccy", "curr", "cur", "currency code"] },
  delivery: {
    required: false,
    aliases: [
      "delivery preference",
      "speed",
      "method",
      "delivery method",
      "delivery speed",
      "payment method",
    ],
  },
  payer_memo: {
    required: false,
    aliases: ["memo", "internal memo", "internal note"],
    maxLength: TEXT_LIMITS.payerMemo,
  },
  recipient_note: {
    required: false,
    aliases: ["note", "description", "note to recipient", "remittance info", "remittance information"],
    maxLength: TEXT_LIMITS.recipientNote,
  },
  purpose: { required: false, aliases: ["payment purpose", "purpose code"], maxLength: TEXT_LIMITS.purpose },
  attachment: { required: false, aliases: ["attachment id", "attachment path", "attachment file"] },
} as const satisfies Record<string, SheetColumnRule>;

export type SheetColumnName = keyof typeof SHEET_COLUMN_RULES;

/** The sheet columns we read, besides `metadata.<key>`, in the template's order. */
export const SHEET_COLUMNS = Object.keys(SHEET_COLUMN_RULES) as readonly SheetColumnName[];

/** Columns without which no row can be paid. */
export const REQUIRED_COLUMNS: readonly SheetColumnName[] = SHEET_COLUMNS.filter(
  (name) => SHEET_COLUMN_RULES[name].required,
);

/** The rule of one column (a typed look-up, so `maxLength` reads as optional on every column). */
export function columnRule(name: SheetColumnName): SheetColumnRule {
  return SHEET_COLUMN_RULES[name];
}

/** Metadata keys the pipeline adds to every payment; sheet metadata columns may not use them. */
export const RESERVED_METADATA_KEYS = ["payouts_batch", "payouts_row", "payouts_attempt"] as const;

/**
 * `metadata.<key>` columns (also written `metadata:<key>` or `meta.<key>`): each becomes metadata `<key>`
 * on the payment. The service keeps {@link METADATA_MAX_KEYS} keys and we add the reserved ones.
 */
export const METADATA_COLUMNS = {
  prefix: "metadata.",
  keyMax: METADATA_KEY_MAX,
  valueMax: METADATA_VALUE_MAX,
  maxColumns: METADATA_MAX_KEYS - RESERVED_METADATA_KEYS.length,
} as const;
