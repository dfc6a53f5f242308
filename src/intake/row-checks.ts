/**
 * The checks of one row, one function per concern, in the order checkRow (check-row.ts) runs them:
 * that order is the order of a row's problems. Each reads the row through a RowReader, reports what
 * is wrong, and returns the value it resolved (undefined when there is none to use). Pure.
 */
import path from "node:path";
import { currencyExponent, parseAmount } from "../money/index.js";
import {
  type Account,
  accountCurrency,
  EXTERNAL_ID_PATTERN,
  paymentOperationFor,
} from "../payouts-api/wire-types.js";
import { columnRule, METADATA_COLUMNS } from "../sheet-columns/index.js";
import type { LiveContext } from "./live-context.js";
import { label, type Route, resolveRoute } from "./payment-route.js";
import type { PayoutInstruction } from "./payout-instruction.js";
import type { RowReader } from "./row-reader.js";

/** `reference`: letters, digits, `-` and `_`, within its length limit; undefined when blank. */
export function checkReference(r: RowReader): string | undefined {
  const reference = r.text("reference") || undefined;
  if (reference === undefined) return undefined;
  const max = columnRule("reference").maxLength!;
  if (!EXTERNAL_ID_PATTERN.test(reference)) {
    r.report(
      "reference",
      "REFERENCE_INVALID",
      `reference "${reference}" may only hold letters, digits, "-" and "_"; remove spaces and other characters`,
    );
  } else if (reference.length > max) {
    r.report(
      "reference",
      "REFERENCE_TOO_LONG",
      `reference is ${reference.length} characters; at most ${max} are allowed`,
    );
  }
  return reference;
}

export interface RowAccounts {
  from: Account | undefined;
  to: Account | undefined;
  /** Both found, paying from one of ours (internal) to a payee (external). */
  usable: { from: Account; to: Account } | undefined;
}

/** `from_account` and `to_account`: found, ours paying a payee, a bank account verified. */
export function checkAccounts(r: RowReader, live: LiveContext): RowAccounts {
  const from = findAccount(r, live, "from_account");
  const to = findAccount(r, live, "to_account");
  if (from) {
    if (from.ownershipType !== "internal") {
      r.report(
        "from_account",
        "FROM_ACCOUNT_NOT_INTERNAL",
        `${label(from)} is a payee (external) account; from_account must be one of your own (internal) accounts`,
      );
    } else if (from.type === "ach" && from.isVerified === false) {
      r.report(
        "from_account",
        "FROM_ACCOUNT_NOT_VERIFIED",
        `${label(from)} is not verified yet (micro-deposit verification is outstanding); pay from a verified account or finish verification first`,
      );
    }
  }
  if (to && to.ownershipType !== "external") {
    r.report(
      "to_account",
      "TO_ACCOUNT_NOT_EXTERNAL",
      `${label(to)} is one of your own (internal) accounts; to_account must be a payee (external) account`,
    );
  }
  const usable =
    from && to && from.ownershipType === "internal" && to.ownershipType === "external"
      ? { from, to }
      : undefined;
  return { from, to, usable };
}

function findAccount(
  r: RowReader,
  live: LiveContext,
  name: "from_account" | "to_account",
): Account | undefined {
  const ref = r.text(name);
  if (ref === undefined) return undefined;
  const isFrom = name === "from_account";
  if (ref === "") {
    r.report(
      name,
      isFrom ? "FROM_ACCOUNT_MISSING" : "TO_ACCOUNT_MISSING",
      `${name} is blank; write an acct_ id or the account's externalId${r.mergedHint(name)}`,
    );
    return undefined;
  }
  const account = live.findAccount(ref);
  if (!account) {
    r.report(
      name,
      isFrom ? "FROM_ACCOUNT_NOT_FOUND" : "TO_ACCOUNT_NOT_FOUND",
      `no account "${ref}" exists for this entity (looked up by acct_ id and by externalId); check the spelling or create the account first`,
    );
  }
  return account;
}

/** `currency`: an ISO 4217 code (blank means USD) that is the payee account's own currency. */
export function checkCurrency(r: RowReader, to: Account | undefined): string | undefined {
  const currencyText = r.text("currency");
  if (currencyText === undefined) return undefined;
  const currency = (currencyText || "USD").toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) {
    r.report(
      "currency",
      "CURRENCY_INVALID",
      `"${currencyText}" is not a currency code; write a three-letter ISO 4217 code such as USD or EUR`,
    );
    return undefined;
  }
  if (currencyExponent(currency) === undefined) {
    r.report("currency", "CURRENCY_UNKNOWN", `"${currency}" is not an ISO 4217 currency code`);
    return undefined;
  }
  if (to && to.ownershipType === "external") {
    const payeeCurrency = accountCurrency(to);
    if (payeeCurrency !== currency) {
      r.report(
        "currency",
        "CURRENCY_MISMATCH",
        `${label(to)} is paid in ${payeeCurrency}, but the row says ${currency}${currencyText ? "" : " (blank means USD)"}; write ${payeeCurrency} and the amount in ${payeeCurrency}`,
      );
      return undefined;
    }
  }
  return currency;
}

/** `amount`, in minor units: only meaningful once the currency (and so its exponent) is known. */
export function checkAmount(r: RowReader, currency: string | undefined): number | undefined {
  if (currency === undefined || r.broken("amount")) return undefined;
  const cell = r.cell("amount");
  const parsed =
    cell.kind === "number" && cell.number !== undefined
      ? parseAmount(cell.number, currency)
      : parseAmount(cell.text, currency, r.header.amountConvention);
  if (parsed.ok) return parsed.minor;
  r.report(
    "amount",
    parsed.code,
    `${parsed.message}${parsed.code === "AMOUNT_MISSING" ? r.mergedHint("amount") : ""}`,
  );
  return undefined;
}

/** `delivery`, by the delivery rules (src/delivery/), once both accounts are usable. */
export function checkDelivery(r: RowReader, accounts: RowAccounts["usable"]): Route | undefined {
  const deliveryText = r.text("delivery");
  if (!accounts || deliveryText === undefined) return undefined;
  const route = resolveRoute(accounts.from, accounts.to, deliveryText);
  if (!route.ok) {
    const column = route.problem.code === "TO_ACCOUNT_NO_RAIL" ? "to_account" : "delivery";
    r.report(column, route.problem.code, route.problem.message);
  }
  return route;
}

/** What the entity may do today: a payee's kind of payment must be allowed by its limitations. */
export function checkEntityCapability(r: RowReader, live: LiveContext, to: Account | undefined): void {
  if (to?.ownershipType !== "external") return;
  const operation = paymentOperationFor(to.type);
  const capability = live.capability(operation);
  if (!capability || capability.allowed) return;
  const reasons = capability.reasons.map((reason) => {
    const missing = reason.missingFields.length > 0 ? ` (missing: ${reason.missingFields.join(", ")})` : "";
    return `${reason.code}: ${reason.message}${missing}`;
  });
  r.report(
    "to_account",
    "OPERATION_NOT_ALLOWED",
    `the entity may not make ${operation.replace(":write", "")} payments today: ${reasons.join("; ") || "no reason given"}`,
  );
}

/** An optional free-text column within its length limit (src/sheet-columns/). */
export function checkFreeText(
  r: RowReader,
  name: "payer_memo" | "recipient_note" | "purpose",
): string | undefined {
  const value = r.text(name);
  if (!value) return undefined;
  const max = columnRule(name).maxLength!;
  if (value.length > max) {
    r.report(name, "TEXT_TOO_LONG", `${name} is ${value.length} characters; at most ${max} are allowed`);
    return undefined;
  }
  return value;
}

/** The `metadata.<key>` columns: non-blank values within the service's limit. */
export function checkMetadata(r: RowReader): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const { column, canonical, key } of r.plan.metadata) {
    const value = r.text(canonical);
    if (!value) continue;
    if (value.length > METADATA_COLUMNS.valueMax) {
      r.report(
        canonical,
        "METADATA_VALUE_TOO_LONG",
        `${column.original} is ${value.length} characters; metadata values hold at most ${METADATA_COLUMNS.valueMax}`,
      );
    } else {
      metadata[key] = value;
    }
  }
  return metadata;
}

/**
 * `attachment`: an `att_` id as is, or a path inside the sheet's folder (judged here as text; the file
 * itself is checked on disk by attachment-file.ts).
 */
export function checkAttachment(r: RowReader, sheetDir: string): PayoutInstruction["attachment"] {
  const attachmentText = r.text("attachment");
  if (!attachmentText) return undefined;
  if (/^att_[A-Za-z0-9_-]+$/.test(attachmentText)) return { kind: "id", id: attachmentText };
  const resolved = path.resolve(sheetDir, attachmentText);
  const relative = path.relative(sheetDir, resolved);
  // `..` as a path segment climbs out; a file named `..invoice.pdf` does not.
  const outside = relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
  if (path.isAbsolute(attachmentText) || outside || relative === "") {
    r.report(
      "attachment",
      "ATTACHMENT_INVALID",
      `attachment "${attachmentText}" must be an att_ id or a file path inside the sheet's folder (no absolute paths, no "..")`,
    );
    return undefined;
  }
  return { kind: "file", path: resolved };
}
