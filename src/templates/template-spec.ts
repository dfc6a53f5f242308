/**
 * What the payout sheet template contains, as data: the columns with their help text, formats and
 * dropdowns, and the instruction notes. The XLSX/CSV builders render this description and the test
 * checks the checked-in files against it. Whether a column is required and how long its values may be
 * come from src/sheet-columns/ (the same table intake checks against), and the delivery rules' words
 * from src/delivery/, so the template's help cannot disagree with what intake does.
 */
import { deliveryRulesInWords, RAIL_PREFERENCES, STANDARD_PREFERENCE } from "../delivery/index.js";
import {
  DELIVERY_PREFERENCES,
  type DeliveryPreference,
  METADATA_MAX_KEYS,
} from "../payouts-api/wire-types.js";
import { columnRule, METADATA_COLUMNS, type SheetColumnName } from "../sheet-columns/index.js";

export type TemplateFormat = "xlsx" | "csv";
export const TEMPLATE_FORMATS: readonly TemplateFormat[] = ["xlsx", "csv"];

/** Names of the sheets in the XLSX template; the data sheet comes first (readers take the first). */
export const SHEETS = { data: "Payouts", instructions: "Instructions", lists: "Lists" } as const;

/** Rows 2..LAST_DATA_ROW carry the dropdowns: enough for any hand-made sheet, small enough to stay fast. */
export const FIRST_DATA_ROW = 2;
export const LAST_DATA_ROW = 5000;

/** Cell number formats: `@` keeps ids as text (leading zeros survive), amounts show 2 decimals. */
export const TEXT_FORMAT = "@";
export const AMOUNT_FORMAT = "#,##0.00";

export type ColumnValidation =
  | { kind: "delivery" }
  | { kind: "currency" }
  | { kind: "positive-amount" }
  | { kind: "max-length"; max: number };

export interface TemplateColumn {
  header: string;
  required: boolean;
  /** Help text on the Instructions sheet. */
  meaning: string;
  example: string;
  width: number;
  numFmt?: string;
  validation?: ColumnValidation;
}

const standardList = Object.entries(STANDARD_PREFERENCE)
  .map(([rail, pref]) => `${pref} (${rail})`)
  .join(", ");

/** What the template says about one of our columns; `required` and its length limit come from the column's rule. */
interface ColumnHelp {
  meaning: string;
  example: string;
  width: number;
  numFmt?: string;
  validation?: ColumnValidation;
}

/** A template column for our column `name`: required and length check as src/sheet-columns/ says. */
function ourColumn(name: SheetColumnName, help: ColumnHelp): TemplateColumn {
  const rule = columnRule(name);
  const lengthCheck: ColumnValidation | undefined =
    rule.maxLength === undefined ? undefined : { kind: "max-length", max: rule.maxLength };
  const validation = help.validation ?? lengthCheck;
  return {
    header: name,
    required: rule.required,
    ...help,
    ...(validation === undefined ? {} : { validation }),
  };
}

/** "at most N characters" for a column with a length limit. */
function limitOf(name: SheetColumnName): string {
  const max = columnRule(name).maxLength;
  return max === undefined ? "" : `at most ${max} characters`;
}

const metadataLimit = `at most ${METADATA_COLUMNS.valueMax} characters`;

export const TEMPLATE_COLUMNS: readonly TemplateColumn[] = [
  ourColumn("reference", {
    meaning:
      `Recommended: your unique id for this payout: letters, digits, - and _ only (no spaces or /), ${limitOf("reference")}. ` +
      "Unique within the sheet. It becomes the payment's externalId and identifies the row in every report, " +
      "result file and retry, so never reuse one (an invoice number reused next month is refused). Without " +
      "one, a row is known by its row number.",
    example: "INV-2024-0417",
    width: 20,
    numFmt: TEXT_FORMAT,
  }),
  ourColumn("from_account", {
    meaning:
      "The paying internal account (yours): its acct_... id or its externalId. A bank (ACH) account must be " +
      "verified before it can pay.",
    example: "ops-checking",
    width: 20,
    numFmt: TEXT_FORMAT,
  }),
  ourColumn("to_account", {
    meaning: "The payee's external account: its acct_... id or its externalId.",
    example: "vendor-ach",
    width: 20,
    numFmt: TEXT_FORMAT,
  }),
  ourColumn("amount", {
    meaning:
      "What the payee receives, in major units of the currency (1250.00 dollars, 5000 yen). See the amount " +
      "rules below: never more decimals than the currency has; nothing is rounded.",
    example: "1250.00",
    width: 14,
    numFmt: AMOUNT_FORMAT,
    validation: { kind: "positive-amount" },
  }),
  ourColumn("currency", {
    meaning:
      "ISO 4217 code of the amount; blank means USD. It must be the payee account's currency. The dropdown " +
      "offers common codes; another valid code can be typed in.",
    example: "USD",
    width: 10,
    validation: { kind: "currency" },
  }),
  ourColumn("delivery", {
    meaning: `How fast and by which rail to pay; blank means the standard speed of the payee's rail: ${standardList}. See the delivery table below.`,
    example: "same-day-ach",
    width: 22,
    validation: { kind: "delivery" },
  }),
  ourColumn("payer_memo", {
    meaning: `Private note for your own records, never shown to the payee (${limitOf("payer_memo")}).`,
    example: "April office cleaning",
    width: 28,
  }),
  ourColumn("recipient_note", {
    meaning: `Note shown to the payee (${limitOf("recipient_note")}).`,
    example: "Invoice INV-2024-0417, thank you",
    width: 28,
  }),
  ourColumn("purpose", {
    meaning: `International payments: what the goods or services are, sent with the payment for compliance (${limitOf("purpose")}).`,
    example: "Purchase of packaging materials",
    width: 28,
  }),
  ourColumn("attachment", {
    meaning:
      "A supporting document (an invoice): an att_... id already uploaded, or a file path relative to the " +
      "sheet's folder (e.g. attachments/invoice.pdf; the file itself, not a link). Some international payees " +
      "require one, often on the first payment to them.",
    example: "attachments/invoice-0417.pdf",
    width: 28,
  }),
  {
    header: "metadata.cost_center",
    required: false,
    meaning: `Example metadata column: any column named metadata.<key> is stored on the payment as metadata <key> (${metadataLimit} per value). Rename, add or delete these columns freely.`,
    example: "CC-410 Facilities",
    width: 20,
    validation: { kind: "max-length", max: METADATA_COLUMNS.valueMax },
  },
  {
    header: "metadata.invoice",
    required: false,
    meaning: "Example metadata column: the invoice number this payout settles.",
    example: "INV-2024-0417",
    width: 20,
    numFmt: TEXT_FORMAT,
    validation: { kind: "max-length", max: METADATA_COLUMNS.valueMax },
  },
];

export const TEMPLATE_HEADERS: readonly string[] = TEMPLATE_COLUMNS.map((c) => c.header);

/** The delivery dropdown as an inline list. Excel caps inline lists at 255 characters. */
export const DELIVERY_LIST_FORMULA = `"${DELIVERY_PREFERENCES.join(",")}"`;
export const INLINE_LIST_MAX = 255;

export interface CurrencyEntry {
  code: string;
  name: string;
  /** Minor-unit digits (ISO 4217): the most decimals an amount may have. */
  decimals: number;
}

/** The currency dropdown (on the Lists sheet): common payout currencies, USD first. */
export const COMMON_CURRENCIES: readonly CurrencyEntry[] = [
  { code: "USD", name: "US dollar", decimals: 2 },
  { code: "EUR", name: "Euro", decimals: 2 },
  { code: "GBP", name: "Pound sterling", decimals: 2 },
  { code: "CAD", name: "Canadian dollar", decimals: 2 },
  { code: "MXN", name: "Mexican peso", decimals: 2 },
  { code: "JPY", name: "Japanese yen", decimals: 0 },
  { code: "AUD", name: "Australian dollar", decimals: 2 },
  { code: "NZD", name: "New Zealand dollar", decimals: 2 },
  { code: "CHF", name: "Swiss franc", decimals: 2 },
  { code: "SEK", name: "Swedish krona", decimals: 2 },
  { code: "NOK", name: "Norwegian krone", decimals: 2 },
  { code: "DKK", name: "Danish krone", decimals: 2 },
  { code: "PLN", name: "Polish zloty", decimals: 2 },
  { code: "CZK", name: "Czech koruna", decimals: 2 },
  { code: "HUF", name: "Hungarian forint", decimals: 2 },
  { code: "CNY", name: "Chinese yuan", decimals: 2 },
  { code: "HKD", name: "Hong Kong dollar", decimals: 2 },
  { code: "SGD", name: "Singapore dollar", decimals: 2 },
  { code: "INR", name: "Indian rupee", decimals: 2 },
  { code: "PHP", name: "Philippine peso", decimals: 2 },
  { code: "KRW", name: "South Korean won", decimals: 0 },
  { code: "BRL", name: "Brazilian real", decimals: 2 },
  { code: "COP", name: "Colombian peso", decimals: 2 },
  { code: "CLP", name: "Chilean peso", decimals: 0 },
  { code: "ZAR", name: "South African rand", decimals: 2 },
  { code: "AED", name: "UAE dirham", decimals: 2 },
  { code: "ILS", name: "Israeli new shekel", decimals: 2 },
];

/** The Lists-sheet range the currency dropdown points at. */
export const CURRENCY_LIST_RANGE = `${SHEETS.lists}!$A$2:$A$${COMMON_CURRENCIES.length + 1}`;

/** Delivery preferences with the payee rail they pay to and whether they are the rail's normal speed. */
export function deliveryTable(): { delivery: DeliveryPreference; rail: string; speed: string }[] {
  const rows: { delivery: DeliveryPreference; rail: string; speed: string }[] = [];
  for (const [rail, prefs] of Object.entries(RAIL_PREFERENCES)) {
    for (const delivery of prefs) {
      const standard = STANDARD_PREFERENCE[rail as keyof typeof STANDARD_PREFERENCE] === delivery;
      rows.push({ delivery, rail, speed: standard ? "standard (used when blank)" : "faster" });
    }
  }
  return rows;
}

/** General rules shown under the column table on the Instructions sheet. */
export const INSTRUCTION_NOTES: readonly { topic: string; text: string }[] = [
  {
    topic: "Rows",
    text:
      "One row per payout, on the Payouts sheet, starting at row 2. Keep the header row; headers match " +
      "regardless of case and spaces. Rows are identified by their reference (without one, by their row " +
      "number): reports, result files and retries name rows by it, and a sheet submitted twice never pays a " +
      "reference twice.",
  },
  {
    topic: "Amounts",
    text:
      "Major units of the row's currency, as a number: 1250.00 or 1250 for dollars, 150000 for yen. A " +
      "decimal point or a decimal comma (1250,50) is accepted; leave out thousands separators and currency " +
      "symbols. Amounts are never guessed or rounded: an amount whose decimal mark is unclear (1,234), more " +
      "decimals than the currency has (12.345 USD, 10.5 JPY), zero or negative amounts are errors.",
  },
  {
    topic: "Currency",
    text:
      "Blank means USD. The currency must be the payee account's own currency: domestic rails and " +
      "international-gusd pay USD; an international-fx account is paid in its currency, and your account " +
      "is debited the USD equivalent.",
  },
  {
    topic: "Delivery",
    text: deliveryRulesInWords(),
  },
  {
    topic: "Metadata",
    text:
      `Each column named metadata.<key> becomes metadata <key> on the payment, for your own reporting ` +
      `(keys 1-${METADATA_COLUMNS.keyMax} characters without [ or ]; values ${metadataLimit}; ` +
      `at most ${METADATA_MAX_KEYS} keys in all, including the few payouts adds to name the ` +
      "batch and row). Blank cells add nothing.",
  },
  {
    topic: "Attachments",
    text:
      "For payees that require a document, put an att_... id or the path of the file relative to the " +
      "sheet in the attachment column, and upload the file together with the sheet.",
  },
  {
    topic: "Saving",
    text:
      "Save as .xlsx, or as CSV UTF-8 (comma delimited). Results come back in the same format with a status " +
      "per row.",
  },
];
