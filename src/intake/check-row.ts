/**
 * The rules one row of a payout sheet must pass, as pure functions of the row, the sheet's header and
 * the live context. What needs I/O (the service's eligibility tool, an attachment file on disk,
 * uniqueness across rows) is left to validate-sheet.ts, which calls these.
 */
import path from "node:path";
import { currencyExponent, parseAmount } from "../money/index.js";
import {
  type Account,
  accountCurrency,
  EXTERNAL_ID_PATTERN,
  METADATA_KEY_MAX,
  METADATA_MAX_KEYS,
  METADATA_VALUE_MAX,
  paymentOperationFor,
  TEXT_LIMITS,
} from "../payouts-api/wire-types.js";
import type { SheetCell, SheetColumn, SheetHeader, SheetRow } from "../sheets/index.js";
import type { LiveContext } from "./live-context.js";
import { label, resolveRoute } from "./payment-route.js";
import { type PayoutInstruction, RESERVED_METADATA_KEYS, rowKeyOf } from "./payout-instruction.js";
import { type Problem, type ProblemCode, problem } from "./problems.js";

/** Columns without which no row can be paid. `reference` is optional: rows are then keyed by number. */
export const REQUIRED_COLUMNS = ["from_account", "to_account", "amount"] as const;

/**
 * A reference becomes the payment externalId, and an operator retry appends `-r<attempt>`; keeping it
 * to 200 characters leaves room for that within the spec's 255.
 */
export const REFERENCE_MAX = 200;

const METADATA_PREFIX = "metadata.";
const EMPTY_CELL: SheetCell = { text: "", kind: "empty" };

/** Problems of the sheet as a whole, found from its header alone. */
export function checkHeader(header: SheetHeader): Problem[] {
  const problems: Problem[] = [];
  const canonical = new Set(header.columns.map((c) => c.canonical));
  for (const name of REQUIRED_COLUMNS) {
    if (!canonical.has(name)) {
      problems.push(
        problem(
          null,
          name,
          "COLUMN_MISSING",
          `the sheet has no "${name}" column (header found on row ${header.headerRowNumber}); add it, or start from \`payouts template\``,
        ),
      );
    }
  }
  const metadataColumns = header.columns.filter((c) => c.canonical?.startsWith(METADATA_PREFIX));
  const room = METADATA_MAX_KEYS - RESERVED_METADATA_KEYS.length;
  if (metadataColumns.length > room) {
    problems.push(
      problem(
        null,
        null,
        "TOO_MANY_METADATA_COLUMNS",
        `the sheet has ${metadataColumns.length} metadata columns; at most ${room} fit (the service keeps ${METADATA_MAX_KEYS} keys and we add ${RESERVED_METADATA_KEYS.length})`,
      ),
    );
  }
  for (const column of metadataColumns) {
    const key = column.canonical!.slice(METADATA_PREFIX.length);
    const why =
      key.length === 0
        ? "is empty"
        : key.length > METADATA_KEY_MAX
          ? `is longer than ${METADATA_KEY_MAX} characters`
          : /[[\]]/.test(key)
            ? "contains [ or ]"
            : (RESERVED_METADATA_KEYS as readonly string[]).includes(key)
              ? "is reserved for the batch and row the payment belongs to"
              : undefined;
    if (why) {
      problems.push(
        problem(
          null,
          column.original,
          "METADATA_KEY_INVALID",
          `metadata key "${key}" ${why}; rename the column`,
        ),
      );
    }
  }
  return problems;
}

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

export function checkRow(row: SheetRow, ctx: RowCheckContext): RowCheck {
  const problems: Problem[] = [];
  const plan = headerPlan(ctx.header);
  const columns = plan.byName;
  const at = (name: string): SheetCell => {
    const column = columns.get(name);
    return column ? (row.cells[column.key] ?? EMPTY_CELL) : EMPTY_CELL;
  };
  const report = (name: string, code: ProblemCode, message: string) =>
    problems.push(problem(row.rowNumber, columns.get(name)?.original ?? name, code, message));
  const where = (name: string) => {
    const column = columns.get(name);
    return column ? `${column.letter}${row.rowNumber}` : name;
  };

  // A value right of the last headed column has no meaning we could give it, and in a CSV it is the
  // mark of a field split by an unquoted comma (`1,250.00` read as amount 1 and one cell too many):
  // never pay such a row.
  if (row.unheaded) {
    for (const [letter, cell] of Object.entries(row.unheaded)) {
      if (cell.kind === "empty" || cell.text.trim() === "") continue;
      problems.push(
        problem(
          row.rowNumber,
          `column ${letter}`,
          "UNHEADED_CELL",
          `cell ${letter}${row.rowNumber} holds "${cell.text.trim()}" but its column has no header; usually a comma inside an unquoted value (such as 1,250.00) split it: quote that value, remove the thousands separator, or give the column a header`,
        ),
      );
      break;
    }
  }

  // Error cells first: a #REF! amount must say #REF!, not "amount missing". (Made only when a row has
  // one: most rows have none.)
  let broken: Set<string> | undefined;
  for (const column of plan.ours) {
    const cell = row.cells[column.key];
    if (cell?.kind === "error") {
      broken ??= new Set<string>();
      broken.add(column.canonical!);
      const what =
        cell.error === "FORMULA_NOT_CALCULATED"
          ? "holds a formula without a calculated value; open the file in your spreadsheet, recalculate and save it"
          : `shows the error ${cell.text || cell.error}; fix the formula or type the value`;
      problems.push(
        problem(
          row.rowNumber,
          column.original,
          "CELL_ERROR",
          `cell ${column.letter}${row.rowNumber} ${what}`,
        ),
      );
    }
  }
  const text = (name: string): string | undefined => {
    if (broken?.has(name)) return undefined;
    const cell = at(name);
    if (cell.lossy) {
      report(
        name,
        "ID_PRECISION_LOST",
        `cell ${where(name)} holds ${cell.text}, a number of more than 15 digits: the spreadsheet has already replaced its last digits with zeros. Format the column as Text and type the id again`,
      );
      return undefined;
    }
    return cell.text.trim();
  };
  const mergedHint = (name: string) => {
    const merged = at(name).mergedInto;
    return merged
      ? ` (cell ${where(name)} is part of the merged range ${merged}; unmerge it and fill every row)`
      : "";
  };

  // reference
  const reference = text("reference") || undefined;
  if (reference !== undefined) {
    if (!EXTERNAL_ID_PATTERN.test(reference)) {
      report(
        "reference",
        "REFERENCE_INVALID",
        `reference "${reference}" may only hold letters, digits, "-" and "_"; remove spaces and other characters`,
      );
    } else if (reference.length > REFERENCE_MAX) {
      report(
        "reference",
        "REFERENCE_TOO_LONG",
        `reference is ${reference.length} characters; at most ${REFERENCE_MAX} are allowed`,
      );
    }
  }

  // accounts
  const from = resolveAccount("from_account", text("from_account"));
  const to = resolveAccount("to_account", text("to_account"));
  if (from) {
    if (from.ownershipType !== "internal") {
      report(
        "from_account",
        "FROM_ACCOUNT_NOT_INTERNAL",
        `${label(from)} is a payee (external) account; from_account must be one of your own (internal) accounts`,
      );
    } else if (from.type === "ach" && from.isVerified === false) {
      report(
        "from_account",
        "FROM_ACCOUNT_NOT_VERIFIED",
        `${label(from)} is not verified yet (micro-deposit verification is outstanding); pay from a verified account or finish verification first`,
      );
    }
  }
  if (to && to.ownershipType !== "external") {
    report(
      "to_account",
      "TO_ACCOUNT_NOT_EXTERNAL",
      `${label(to)} is one of your own (internal) accounts; to_account must be a payee (external) account`,
    );
  }
  const accountsOk = from && to && from.ownershipType === "internal" && to.ownershipType === "external";

  // currency
  const currencyText = text("currency");
  let currency: string | undefined =
    currencyText === undefined ? undefined : (currencyText || "USD").toUpperCase();
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency)) {
    report(
      "currency",
      "CURRENCY_INVALID",
      `"${currencyText}" is not a currency code; write a three-letter ISO 4217 code such as USD or EUR`,
    );
    currency = undefined;
  } else if (currency !== undefined && currencyExponent(currency) === undefined) {
    report("currency", "CURRENCY_UNKNOWN", `"${currency}" is not an ISO 4217 currency code`);
    currency = undefined;
  }
  if (currency !== undefined && to && to.ownershipType === "external") {
    const payeeCurrency = accountCurrency(to);
    if (payeeCurrency !== currency) {
      report(
        "currency",
        "CURRENCY_MISMATCH",
        `${label(to)} is paid in ${payeeCurrency}, but the row says ${currency}${currencyText ? "" : " (blank means USD)"}; write ${payeeCurrency} and the amount in ${payeeCurrency}`,
      );
      currency = undefined;
    }
  }

  // amount: only meaningful once the currency (and so its exponent) is known
  let amount: number | undefined;
  if (currency !== undefined && !broken?.has("amount")) {
    const cell = at("amount");
    const parsed =
      cell.kind === "number" && cell.number !== undefined
        ? parseAmount(cell.number, currency)
        : parseAmount(cell.text, currency, ctx.header.amountConvention);
    if (parsed.ok) amount = parsed.minor;
    else
      report(
        "amount",
        parsed.code,
        `${parsed.message}${parsed.code === "AMOUNT_MISSING" ? mergedHint("amount") : ""}`,
      );
  }

  // delivery preference, by the rules of the spec
  let route: ReturnType<typeof resolveRoute> | undefined;
  const deliveryText = text("delivery");
  if (accountsOk && deliveryText !== undefined) {
    route = resolveRoute(from, to, deliveryText);
    if (!route.ok)
      report(
        route.problem.code === "TO_ACCOUNT_NO_RAIL" ? "to_account" : "delivery",
        route.problem.code,
        route.problem.message,
      );
  }

  // what the entity may do today
  if (to && to.ownershipType === "external") {
    const operation = paymentOperationFor(to.type);
    const capability = ctx.live.capability(operation);
    if (capability && !capability.allowed) {
      const reasons = capability.reasons.map((r) => {
        const missing = r.missingFields.length > 0 ? ` (missing: ${r.missingFields.join(", ")})` : "";
        return `${r.code}: ${r.message}${missing}`;
      });
      report(
        "to_account",
        "OPERATION_NOT_ALLOWED",
        `the entity may not make ${operation.replace(":write", "")} payments today: ${reasons.join("; ") || "no reason given"}`,
      );
    }
  }

  // free text
  const memo = optionalText("payer_memo", TEXT_LIMITS.payerMemo);
  const note = optionalText("recipient_note", TEXT_LIMITS.recipientNote);
  const purpose = optionalText("purpose", TEXT_LIMITS.purpose);

  // metadata columns
  const metadata: Record<string, string> = {};
  for (const { column, canonical, key } of plan.metadata) {
    const value = text(canonical);
    if (!value) continue;
    if (value.length > METADATA_VALUE_MAX) {
      report(
        canonical,
        "METADATA_VALUE_TOO_LONG",
        `${column.original} is ${value.length} characters; metadata values hold at most ${METADATA_VALUE_MAX}`,
      );
    } else {
      metadata[key] = value;
    }
  }

  // attachment: an att_ id as is, or a file next to the sheet
  let attachment: PayoutInstruction["attachment"];
  const attachmentText = text("attachment");
  if (attachmentText) {
    if (/^att_[A-Za-z0-9_-]+$/.test(attachmentText)) {
      attachment = { kind: "id", id: attachmentText };
    } else {
      const resolved = path.resolve(ctx.sheetDir, attachmentText);
      const relative = path.relative(ctx.sheetDir, resolved);
      // `..` as a path segment climbs out; a file named `..invoice.pdf` does not.
      const outside = relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
      if (path.isAbsolute(attachmentText) || outside || relative === "") {
        report(
          "attachment",
          "ATTACHMENT_INVALID",
          `attachment "${attachmentText}" must be an att_ id or a file path inside the sheet's folder (no absolute paths, no "..")`,
        );
      } else {
        attachment = { kind: "file", path: resolved };
      }
    }
  }

  const needsEligibilityCheck = route?.ok === true && route.needsEligibilityCheck;
  if (problems.length > 0 || !accountsOk || !route?.ok || currency === undefined || amount === undefined) {
    return { problems, needsEligibilityCheck: false };
  }
  const instruction: PayoutInstruction = {
    rowNumber: row.rowNumber,
    rowKey: rowKeyOf(reference, row.rowNumber),
    reference,
    originatingAccountId: from.id,
    receivingAccountId: to.id,
    amount,
    currency,
    deliveryPreference: route.deliveryPreference,
    deliveryResolvedFromBlank: route.resolvedFromBlank,
    payerMemo: memo,
    recipientNote: note,
    purpose,
    attachment,
    metadata,
  };
  // Two literals rather than a spread: a row without an attachment file has no `attachmentFile` key.
  return attachment?.kind === "file"
    ? { problems, needsEligibilityCheck, attachmentFile: attachment.path, instruction }
    : { problems, needsEligibilityCheck, instruction };

  function resolveAccount(name: "from_account" | "to_account", ref: string | undefined): Account | undefined {
    if (ref === undefined) return undefined;
    const isFrom = name === "from_account";
    if (ref === "") {
      report(
        name,
        isFrom ? "FROM_ACCOUNT_MISSING" : "TO_ACCOUNT_MISSING",
        `${name} is blank; write an acct_ id or the account's externalId${mergedHint(name)}`,
      );
      return undefined;
    }
    const account = ctx.live.findAccount(ref);
    if (!account) {
      report(
        name,
        isFrom ? "FROM_ACCOUNT_NOT_FOUND" : "TO_ACCOUNT_NOT_FOUND",
        `no account "${ref}" exists for this entity (looked up by acct_ id and by externalId); check the spelling or create the account first`,
      );
    }
    return account;
  }

  function optionalText(name: "payer_memo" | "recipient_note" | "purpose", max: number): string | undefined {
    const value = text(name);
    if (!value) return undefined;
    if (value.length > max) {
      report(name, "TEXT_TOO_LONG", `${name} is ${value.length} characters; at most ${max} are allowed`);
      return undefined;
    }
    return value;
  }
}

/** What checkRow needs to know about a header, worked out once per header (rows are many, headers one). */
interface HeaderPlan {
  /** Canonical column name → column. */
  byName: Map<string, SheetColumn>;
  /** The columns that are ours (a canonical name), in sheet order. */
  ours: SheetColumn[];
  /** The `metadata.<key>` columns in sheet order, with their canonical name and metadata key. */
  metadata: Array<{ column: SheetColumn; canonical: string; key: string }>;
}

const headerPlans = new WeakMap<SheetHeader, HeaderPlan>();
function headerPlan(header: SheetHeader): HeaderPlan {
  const cached = headerPlans.get(header);
  if (cached) return cached;
  const plan: HeaderPlan = { byName: new Map(), ours: [], metadata: [] };
  for (const column of header.columns) {
    const canonical = column.canonical;
    if (!canonical) continue;
    plan.byName.set(canonical, column);
    plan.ours.push(column);
    if (canonical.startsWith(METADATA_PREFIX)) {
      plan.metadata.push({ column, canonical, key: canonical.slice(METADATA_PREFIX.length) });
    }
  }
  headerPlans.set(header, plan);
  return plan;
}
