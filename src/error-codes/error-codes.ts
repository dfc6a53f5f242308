/**
 * Every error code a person can meet (the Payouts Service's codes from its spec, the tool's own row
 * outcomes, the sheet checks and the reasons a file cannot be read) with a plain sentence saying what
 * happened and the next step. One table, read by the console (through the API's `help`), the result
 * file's `error_message` and the command line, so a code reads the same everywhere. Pure: no I/O.
 *
 * Adding a code is one line: `CODE: ["what happened.", "what to do next."],`.
 */

export interface ErrorHelp {
  code: string;
  /** What happened, in one plain sentence. */
  sentence: string;
  /** What to do about it. */
  nextStep: string;
}

type Entry = readonly [sentence: string, nextStep: string];

// biome-ignore format: one line per code, so adding one is a one-line change
const SERVICE: Record<string, Entry> = {
  VALIDATION_ERROR: ["The Payouts Service refused the payment's details.", "Read the service's reason, correct the row (amount, currency, accounts or delivery) and retry it."],
  INVALID_ACCOUNT_TYPE: ["The account cannot be used this way (wrong kind of account for this payment).", "Check from_account is one of your internal accounts and to_account a payee account, then correct and retry the row."],
  ACCOUNT_NOT_VERIFIED: ["The paying bank account is not verified yet (micro-deposits outstanding).", "Finish the account's verification, then retry the row."],
  INVALID_DELIVERY_PREFERENCE: ["The delivery speed does not fit the payee's account or the paying account.", "Leave delivery blank (the standard speed) or choose one the payee's rail offers, then retry."],
  MCC_REQUIRED: ["The service needs a merchant category code for this card payment.", "Add the merchant details the service asks for to the payee, then retry."],
  MERCHANT_ADDRESS_REQUIRED: ["The service needs the merchant's address for this card payment.", "Complete the payee's address at the service, then retry."],
  GOODS_RECEIVED_REQUIRED: ["The service needs confirmation that goods were received.", "Confirm receipt with the service, then retry."],
  IDEMPOTENCY_KEY_REQUIRED: ["The request reached the service without its idempotency key.", "This is a fault in this tool: report it; the row was not paid."],
  FEE_CALCULATION_FAILED: ["The service could not price the payment's fees.", "Retry the row later; if it keeps failing, contact the service's support."],
  UNSUPPORTED_CURRENCY: ["The service does not pay out in this currency.", "Pay in a currency the payee's account supports, then retry."],
  FX_QUOTE_INVALID: ["The exchange-rate quote was refused (expired or for another amount).", "Retry the row: a new quote is taken."],
  ATTACHMENT_REQUIRED: ["This international payment needs a supporting document.", "Add an attachment (an invoice) to the row and retry it."],
  COMPLIANCE_UPLOAD_FAILED: ["The service could not store the compliance document.", "Retry the row later."],
  ATTACHMENT_UPLOAD_FAILED: ["The attachment could not be uploaded to the service.", "Check the file opens and is under the size limit, then retry."],
  INTERNATIONAL_NOT_ENABLED: ["International payments are not enabled for your business yet.", "Complete international onboarding (beneficial owners) with the service, then retry."],
  ENTITY_ONBOARDING_INCOMPLETE: ["Your business's onboarding at the service is incomplete.", "Complete the missing onboarding details, then retry."],
  UNAUTHORIZED: ["The service did not accept this installation's API key.", "An administrator must check PAYOUTS_API_KEY; then retry the row."],
  NOT_FOUND: ["The service does not know an account or payment this row names.", "Check the row's accounts still exist, correct the row and retry."],
  NO_ACTIVE_API_KEY: ["The service has no active API key for this installation.", "An administrator must issue a new key and set PAYOUTS_API_KEY; then retry."],
  DUPLICATE_ENTITY: ["The business already exists at the service.", "Nothing to do for payments; use the existing entity."],
  DUPLICATE_ACCOUNT: ["The account already exists at the service.", "Use the existing account."],
  DUPLICATE_PAYMENT: ["The service reports this payment exists already.", "Look at the row's payment id before paying again: it may already be paid."],
  DUPLICATE_EXTERNAL_ID: ["This reference was used for an earlier payment.", "Look the earlier payment up; if this is a new payout, give the row a new reference."],
  ACCOUNT_IN_USE: ["The account is in use and cannot be changed now.", "Wait for its payments to finish, then try again."],
  BUSINESS_NOT_ELIGIBLE: ["Your business is not eligible for this kind of payment.", "Contact the service's support about eligibility."],
  PAYMENT_NOT_EDITABLE: ["The payment can no longer be changed.", "Nothing to change; if it must not be paid, ask the payee to return it."],
  PAYMENT_NOT_CANCELABLE: ["The payment is already on its way and can no longer be canceled.", "Wait for it to complete; if it was wrong, ask the payee to return the money."],
  IDEMPOTENCY_KEY_REUSED: ["The service saw this request's key with a different body.", "Retry the row (a new attempt gets a new key); report it if it happens again."],
  IDEMPOTENCY_KEY_IN_PROGRESS: ["The service was still working on the same request.", "Nothing to do: it is retried with the same key."],
  IDEMPOTENCY_STORE_UNAVAILABLE: ["The service could not check for a repeated request just then.", "Nothing to do: it is retried with the same key."],
  INTERNAL_ERROR: ["The service had an internal error.", "Retry the row later; the ledger is checked first, so nothing is paid twice."],
  SERVICE_UNAVAILABLE: ["The service was unavailable.", "Retry the row later; the ledger is checked first, so nothing is paid twice."],
  RATE_LIMITED: ["The service asked us to slow down.", "Nothing to do: requests wait and go on."],
  FORBIDDEN: ["The service refused the request for this account.", "Check the accounts' permissions at the service, then retry."],
  CONFLICT: ["The service refused the request because of the payment's current state.", "Look at the payment at the service, then retry if it is still needed."],
  INVALID_RESPONSE: ["The service gave an answer this tool could not read.", "Retry the row; report it if it happens again."],
};

/** Outcomes the tool itself gives a row (payment worker, reconciliation, approvals). */
// biome-ignore format: one line per code, so adding one is a one-line change
const ROW_OUTCOMES: Record<string, Entry> = {
  PAYMENT_FAILED: ["The payee's bank did not accept the payment (the service reports it failed).", "Check the payee's bank details; correct the payee or amount and retry the row."],
  PAYMENT_CANCELED: ["The payment was canceled at the service before it was paid.", "Retry the row if it should still be paid."],
  ANSWER_MISMATCH: ["The service answered with a payment that is not this row's (another reference, row, amount or account); it was not recorded.", "Nothing to do while the row is resolved against the ledger; if it ends in error, look the row's reference up at the service before retrying."],
  PAYMENT_RETURNED: ["The payment completed, then came back (the service later reported it failed or canceled, as with an ACH return): the payee does not have the money.", "Check the payee's bank details with them, correct the row and retry it; the returned money is back in the paying account."],
  REFERENCE_REUSED: ["This reference already paid another payout (an earlier batch or another system).", "Nothing was paid for this row. If it is a new payout, give it a new reference in a new sheet."],
  BATCH_PAUSED: ["The batch is paused, so this row has not been sent (nothing was paid for it yet).", "Resume the batch to pay it, or cancel the batch if it should not be paid."],
  BATCH_CANCELED: ["The batch was canceled before this row was sent, so nothing was paid for it.", "Nothing to undo; to pay it after all, retry the row or submit it in a new sheet."],
  APPROVAL_REJECTED: ["An approver rejected the batch, so no row was paid.", "Read the approver's reason, fix the sheet and submit it again for approval."],
  APPROVAL_EXPIRED: ["Nobody approved the batch in time, so no row was paid.", "Submit the sheet again and ask an approver to decide."],
  CONNECTION_FAILED: ["The service could not be reached; we do not know whether the payment was made.", "Retry the row: the ledger is checked first, so nothing is paid twice."],
  ETIMEDOUT: ["The service did not answer in time; we do not know whether the payment was made.", "Retry the row: the ledger is checked first, so nothing is paid twice."],
  ECONNRESET: ["The connection to the service dropped; we do not know whether the payment was made.", "Retry the row: the ledger is checked first, so nothing is paid twice."],
  ECONNREFUSED: ["The service refused the connection.", "Check PAYOUTS_API_URL and the service's status, then retry the row."],
};

/** The sheet checks (src/intake): each problem's own message says which cell; this adds the next step. */
// biome-ignore format: one line per code, so adding one is a one-line change
const SHEET_CHECKS: Record<string, Entry> = {
  COLUMN_MISSING: ["A required column is missing from the sheet.", "Add the column (see the template), or map your own header to it."],
  METADATA_KEY_INVALID: ["A metadata column's name is not allowed.", "Rename the metadata.<key> column: 1 to 40 characters, no [ or ]."],
  TOO_MANY_METADATA_COLUMNS: ["The sheet has more metadata columns than a payment may carry.", "Keep at most 50 metadata columns."],
  CONTROL_TOTAL_MISMATCH: ["The sheet's control total (its total row, or the total declared on submit) does not match what its valid rows add up to; nothing was paid.", "Check it is the right sheet; correct the rows or the total and submit again."],
  CONTROL_ROWS_MISMATCH: ["The number of rows declared on submit is not the number of valid rows in the sheet; nothing was paid.", "Check it is the right sheet and that no rows are missing or invalid, then submit again."],
  CONTROL_TOTAL_UNREADABLE: ["The sheet's total row cannot be read (no amount, an error cell, or no currency among several).", "Give the total row a plain amount, one total row per currency with its code, or remove the total row."],
  CONTROL_TOTAL_NOT_LAST: ["A row labelled as a total has payout rows after it.", "Move the total row to the end of the sheet, or remove it."],
  CELL_ERROR: ["A cell holds a spreadsheet error (#N/A, #REF!, ...).", "Fix the formula in your spreadsheet so the cell shows a value."],
  UNHEADED_CELL: ["A cell has a value under no column header.", "Give the column a header or clear the cell."],
  ID_PRECISION_LOST: ["A long number was stored as a number and lost digits.", "Format the column as text in your spreadsheet and type the id again."],
  REFERENCE_INVALID: ["The reference has characters that are not allowed.", "Use letters, digits, - and _ only."],
  REFERENCE_TOO_LONG: ["The reference is too long.", "Use at most 255 characters."],
  POSSIBLE_DUPLICATE: ["Another row pays the same payee the same amount from the same account (in this sheet, or in a batch of the last days); it is held so nothing is paid twice by mistake.", "Check the row it names. If both are meant to be paid, submit again with --allow-possible-duplicates (API: allowPossibleDuplicates, console: the \"pay possible duplicates\" box); otherwise remove the row."],
  REFERENCE_DUPLICATE: ["Two rows have the same reference.", "Give each row its own reference."],
  FROM_ACCOUNT_MISSING: ["The paying account is empty.", "Fill from_account with your account's acct_ id or its external id."],
  FROM_ACCOUNT_NOT_FOUND: ["The paying account does not exist.", "Correct from_account (acct_ id or external id)."],
  FROM_ACCOUNT_NOT_INTERNAL: ["The paying account (from_account) is a payee, not one of your own accounts.", "Put your paying account in from_account."],
  FROM_ACCOUNT_NOT_VERIFIED: ["The paying bank account is not verified yet.", "Finish its verification, or pay from another account."],
  TO_ACCOUNT_MISSING: ["The payee account is empty.", "Fill to_account with the payee's acct_ id or external id."],
  TO_ACCOUNT_NOT_FOUND: ["The payee account does not exist.", "Correct to_account, or add the payee at the service first."],
  TO_ACCOUNT_NOT_EXTERNAL: ["The payee account (to_account) is one of your own accounts, not a payee.", "Put the payee's account in to_account."],
  TO_ACCOUNT_NO_RAIL: ["The payee's account cannot receive payments of any kind we send.", "Use another payee account."],
  CURRENCY_INVALID: ["The currency is not a three-letter code.", "Write an ISO code such as USD, EUR or JPY (blank means USD)."],
  CURRENCY_UNKNOWN: ["The currency code is not one we know.", "Check the code (ISO 4217)."],
  CURRENCY_MISMATCH: ["The currency is not the payee account's currency.", "Use the payee account's own currency."],
  AMOUNT_MISSING: ["The amount is empty.", "Fill in what the payee receives, e.g. 1250.00."],
  AMOUNT_INVALID: ["The amount is not a number.", "Write the amount as digits with a decimal point, e.g. 1250.00."],
  AMOUNT_AMBIGUOUS: ["The amount could be read two ways (decimal mark unclear).", "Write it without thousands separators, e.g. 1234.50."],
  AMOUNT_NEGATIVE: ["The amount is negative.", "Payouts are positive amounts."],
  AMOUNT_ZERO: ["The amount is zero.", "Remove the row or fill in the amount."],
  AMOUNT_TOO_PRECISE: ["The amount has more decimals than the currency has.", "Round it yourself to the currency's decimals (JPY has none)."],
  AMOUNT_TOO_LARGE: ["The amount is larger than a payment may be.", "Split it, or check for a typo."],
  AMOUNT_CURRENCY_MISMATCH: ["The amount does not fit its currency.", "Check the amount and currency together."],
  DELIVERY_UNKNOWN: ["The delivery speed is not one we know.", "Leave it blank (standard) or use a value from the template's list."],
  DELIVERY_RAIL_MISMATCH: ["The delivery speed is for another kind of account than the payee's.", "Leave delivery blank or pick one for the payee's rail."],
  DELIVERY_SUPERSEDED_FOR_CARD: ["From a card account this standard speed is replaced by the fast one.", "Use same-day-ach or instant-domestic-wire, or leave it blank."],
  DELIVERY_VIRTUAL_CARD_FROM_CARD: ["A virtual card cannot be paid from a card account.", "Pay it from a bank account."],
  DELIVERY_NOT_ELIGIBLE: ["The payment is not eligible for the faster delivery.", "Leave delivery blank for the standard speed."],
  OPERATION_NOT_ALLOWED: ["Your business may not make this kind of payment today.", "See the service's reason (onboarding or a restriction) and resolve it."],
  TEXT_TOO_LONG: ["A text cell is too long.", "Shorten it to the limit the message gives."],
  METADATA_VALUE_TOO_LONG: ["A metadata value is too long.", "Keep metadata values to 100 characters."],
  ATTACHMENT_NOT_FOUND: ["The attachment file is not there.", "Upload the file with the sheet (or in a .zip with it), or use an att_ id."],
  ATTACHMENT_INVALID: ["The attachment cannot be used.", "Use a regular file next to the sheet, or an att_ id."],
  ATTACHMENT_TOO_LARGE: ["The attachment file is too large.", "Use a smaller file."],
  ATTACHMENT_LINK: ["The attachment is a link, not a file.", "Put the file itself next to the sheet."],
};

/** Why a whole file could not be read (src/sheets) or was refused on submit. */
// biome-ignore format: one line per code, so adding one is a one-line change
const FILE_CODES: Record<string, Entry> = {
  UNSUPPORTED_FORMAT: ["The file is not a CSV or XLSX sheet.", "Save it as CSV or XLSX (not XLS or ODS) and upload it again."],
  ENCODING_UNSUPPORTED: ["The file's text encoding is not one we read.", "Save the CSV as UTF-8."],
  HEADER_NOT_FOUND: ["No header row was found.", "Put the column names in the first row (see the template)."],
  DUPLICATE_COLUMN: ["Two columns have the same header.", "Rename or remove one of them."],
  SHEET_NOT_FOUND: ["The workbook has no worksheet of that name.", "Check the worksheet's name, or leave it blank for the first one."],
  EMPTY_FILE: ["The file is empty.", "Upload the sheet with its rows."],
  FILE_CORRUPT: ["The file is damaged and cannot be opened.", "Open it in your spreadsheet, save it again and upload that."],
  FILE_NOT_FOUND: ["The file is gone.", "Upload it again."],
  LIMIT_EXCEEDED: ["The file is past a reading limit (size, rows or cell length).", "Split the sheet into smaller ones."],
  FILE_UNSAFE: ["The file holds content no spreadsheet writes.", "Save it again from your spreadsheet program."],
  FORMULA_NOT_CALCULATED: ["A formula cell has no calculated value.", "Open the file in your spreadsheet, let it calculate, save it and upload again."],
  DUPLICATE_FILE: ["This exact file was submitted before.", "Open the earlier batch; to pay it again on purpose, change the sheet or submit with --allow-duplicate-file."],
  ROWS_INVALID: ["Some rows are invalid, so nothing was submitted.", "Correct the rows, or submit the valid rows and skip the invalid ones."],
  NOTHING_TO_PAY: ["The sheet has no valid row to pay.", "Correct the rows and upload again."],
  INVALID_ROW: ["The row did not pass validation.", "Read the row's problems, correct them and submit again."],
};

const TABLE: Readonly<Record<string, Entry>> = {
  ...SERVICE,
  ...ROW_OUTCOMES,
  ...SHEET_CHECKS,
  ...FILE_CODES,
};

/** Every code the table knows. */
export const KNOWN_ERROR_CODES: readonly string[] = Object.keys(TABLE);

/** The sentence and next step for `code`, or a general one for a code the table does not know. */
export function errorHelp(code: string): ErrorHelp {
  const entry = Object.hasOwn(TABLE, code) ? TABLE[code] : undefined;
  if (entry) return { code, sentence: entry[0], nextStep: entry[1] };
  return {
    code,
    sentence: `The row ended with ${code}.`,
    nextStep: "Read the message; correct the row if it is about its details, else retry it.",
  };
}

/** Whether the table has its own words for `code`. */
export function isKnownErrorCode(code: string): boolean {
  return Object.hasOwn(TABLE, code);
}

/**
 * The plain message for a row that ended with `code`: the table's sentence, the service's (or
 * check's) own words when they add something, and the next step. What the result file's
 * `error_message` and the command line show.
 */
export function plainErrorMessage(code: string, detail?: string | null): string {
  const help = errorHelp(code);
  const own = detail?.trim();
  const adds = own && !help.sentence.toLowerCase().includes(own.toLowerCase());
  return `${help.sentence}${adds ? ` (${own})` : ""} Next: ${help.nextStep}`;
}
