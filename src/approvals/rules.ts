/**
 * The approval rules (pure: no I/O). docs/design.md §3.10, "nobody releases their own money":
 *
 * - `APPROVAL_THRESHOLDS` lists `CURRENCY:amount` in major units (`USD:10000,EUR:9000`). A batch whose
 *   total in a listed currency reaches (>=) that currency's threshold needs approval. `*` stands for
 *   every currency not listed, in whole major units of each (`*:0` = every batch needs approval).
 * - `APPROVALS_REQUIRED` distinct approvers, none of them the batch's submitter.
 * - `APPROVAL_EXPIRES_HOURS` after submission an unapproved batch ends `expired`.
 *
 * Amounts go through the project's money module (integer minor units, never floats, never rounded).
 */

import { PayoutsError } from "../errors/index.js";
import { currencyExponent, parseAmount } from "../money/index.js";

/** Wildcard currency of a threshold: every currency not listed by name. */
export const ANY_CURRENCY = "*";

export interface ApprovalThreshold {
  /** ISO 4217 code, or `*`. */
  currency: string;
  /** The amount as written (major units), for people. */
  amount: string;
  /** Minor units of `currency`; for `*`, the whole major units (each currency scales them by its exponent). */
  minor: number;
}

export interface ApprovalPolicy {
  /** Empty: no batch needs approval. */
  thresholds: ApprovalThreshold[];
  /** Distinct approvers needed (>= 1). */
  required: number;
  /** Hours an unapproved batch waits before it ends `expired`. */
  expiresHours: number;
}

export const DEFAULT_APPROVALS_REQUIRED = 1;
export const DEFAULT_APPROVAL_EXPIRES_HOURS = 72;

/** No thresholds: nothing needs approval (the default). */
export const NO_APPROVAL_POLICY: ApprovalPolicy = {
  thresholds: [],
  required: DEFAULT_APPROVALS_REQUIRED,
  expiresHours: DEFAULT_APPROVAL_EXPIRES_HOURS,
};

export class ApprovalRuleError extends PayoutsError {
  override readonly name = "ApprovalRuleError";
  constructor(message: string) {
    super("INVALID_SETTING", message, { kind: "usage" });
  }
}

/**
 * Parses `USD:10000,EUR:9000` (spaces allowed around items; blank = no thresholds). Throws an
 * ApprovalRuleError naming the bad item and what to write instead.
 */
export function parseApprovalThresholds(text: string): ApprovalThreshold[] {
  const out: ApprovalThreshold[] = [];
  const seen = new Set<string>();
  for (const raw of text.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const m = /^([A-Za-z]{3}|\*)\s*:\s*(.+)$/.exec(item);
    if (!m) {
      throw new ApprovalRuleError(
        `"${item}" is not CURRENCY:amount (e.g. USD:10000, or *:0 for every batch)`,
      );
    }
    const currency = m[1]!.toUpperCase();
    const amount = m[2]!.trim();
    if (seen.has(currency)) throw new ApprovalRuleError(`"${currency}" is listed twice`);
    seen.add(currency);
    out.push({ currency, amount, minor: thresholdMinor(currency, amount, item) });
  }
  return out;
}

function thresholdMinor(currency: string, amount: string, item: string): number {
  if (currency === ANY_CURRENCY) {
    // Whole major units only: the same number must be exact in every currency's minor units.
    if (!/^\d{1,12}$/.test(amount)) {
      throw new ApprovalRuleError(`"${item}": the * threshold is a whole number of major units (e.g. *:0)`);
    }
    return Number(amount);
  }
  if (currencyExponent(currency) === undefined) {
    throw new ApprovalRuleError(`"${item}": ${currency} is not an ISO 4217 currency code`);
  }
  if (/^0+(\.0+)?$/.test(amount)) return 0;
  // Plain digits with an optional decimal point: a threshold is configuration, not a sheet cell, so no
  // thousands separators or symbols (they would make `10,000` ambiguous).
  if (!/^\d+(\.\d+)?$/.test(amount)) {
    throw new ApprovalRuleError(`"${item}": write the amount as plain digits in major units (e.g. 10000.50)`);
  }
  const parsed = parseAmount(amount, currency, "dot");
  if (!parsed.ok) throw new ApprovalRuleError(`"${item}": ${parsed.message}`);
  return parsed.minor;
}

/** Positive whole number of approvers. */
export function parseApprovalsRequired(text: string): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1 || Number(text) > 20) {
    throw new ApprovalRuleError(`"${text}" is not a number of approvers from 1 to 20`);
  }
  return Number(text);
}

/** Positive number of hours (fractions allowed: `0.5` is 30 minutes), at most a year. */
export function parseApprovalExpiresHours(text: string): number {
  const hours = Number(text.trim());
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !(hours > 0) || hours > 8760) {
    throw new ApprovalRuleError(`"${text}" is not a number of hours above 0 and at most 8760`);
  }
  return hours;
}

/** Why a batch needs approval: its total in `currency` reached `threshold`. */
export interface ThresholdReached {
  currency: string;
  /** The batch's total in that currency, minor units. */
  total: number;
  /** The threshold it reached, minor units of that currency. */
  threshold: number;
  /** The rule that matched: the currency itself or `*`. */
  rule: string;
}

/** The threshold in minor units of `currency`, or undefined when no rule covers it. */
function thresholdFor(policy: ApprovalPolicy, currency: string): { minor: number; rule: string } | undefined {
  const named = policy.thresholds.find((t) => t.currency === currency);
  if (named) return { minor: named.minor, rule: currency };
  const any = policy.thresholds.find((t) => t.currency === ANY_CURRENCY);
  if (!any) return undefined;
  const exponent = currencyExponent(currency) ?? 2;
  return { minor: any.minor * 10 ** exponent, rule: ANY_CURRENCY };
}

/**
 * Which thresholds a batch with these totals (minor units per currency, of its valid rows) reaches.
 * Empty: it needs no approval.
 */
export function thresholdsReached(
  policy: ApprovalPolicy,
  totals: Readonly<Record<string, number>>,
): ThresholdReached[] {
  const reached: ThresholdReached[] = [];
  for (const [currency, total] of Object.entries(totals).sort(([a], [b]) => a.localeCompare(b))) {
    const threshold = thresholdFor(policy, currency);
    if (threshold && total >= threshold.minor) {
      reached.push({ currency, total, threshold: threshold.minor, rule: threshold.rule });
    }
  }
  return reached;
}

/** When an approval requested at `requestedAt` expires. */
export function approvalExpiry(policy: ApprovalPolicy, requestedAt: Date): Date {
  return new Date(requestedAt.getTime() + Math.round(policy.expiresHours * 3_600_000));
}

/**
 * Identities that are not people (the CLI on a shell, the watched folder, the nightly run) contain a
 * `:`, which no user or token name may (src/auth). They may submit but never approve.
 */
export const SYSTEM_IDENTITY_MARK = ":";

/** How a batch submitted from a shell records its submitter: this, then the OS user's name. */
export const CLI_IDENTITY_PREFIX = "cli:";

export const SYSTEM_IDENTITIES = {
  inbox: "system:inbox",
  schedule: "system:schedule",
  cli: (osUser: string) => `${CLI_IDENTITY_PREFIX}${osUser || "unknown"}`,
} as const;

export function isSystemIdentity(who: string): boolean {
  return who.includes(SYSTEM_IDENTITY_MARK);
}
