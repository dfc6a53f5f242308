import { describe, expect, it } from "vitest";
import { APPROVAL_EXPIRED, APPROVAL_REJECTED } from "../../../src/approvals/index.js";
import { REFERENCE_REUSED } from "../../../src/batches/index.js";
import { errorHelp, isKnownErrorCode, plainErrorMessage } from "../../../src/error-codes/index.js";
import { PROBLEM_CODES } from "../../../src/intake/problems.js";
import { ERROR_CODES } from "../../../src/payouts-api/wire-types.js";
import { PAYMENT_RETURNED } from "../../../src/reconcile/index.js";

/** The Partner Payouts Service's error codes, as its spec lists them (the wire types keep the list). */
const SPEC_CODES = ERROR_CODES;

/** What the tool itself writes into a row's error code or a file's refusal. */
const TOOL_CODES = [
  "PAYMENT_FAILED",
  "PAYMENT_CANCELED",
  PAYMENT_RETURNED,
  REFERENCE_REUSED,
  APPROVAL_REJECTED,
  APPROVAL_EXPIRED,
  "UNSUPPORTED_FORMAT",
  "ENCODING_UNSUPPORTED",
  "HEADER_NOT_FOUND",
  "DUPLICATE_COLUMN",
  "SHEET_NOT_FOUND",
  "EMPTY_FILE",
  "FILE_CORRUPT",
  "FILE_NOT_FOUND",
  "LIMIT_EXCEEDED",
  "FILE_UNSAFE",
  "DUPLICATE_FILE",
  "INVALID_ROW",
  "SERVICE_UNAVAILABLE",
  "RATE_LIMITED",
  "CONNECTION_FAILED",
];

describe("the error-code table", () => {
  it.each([...SPEC_CODES, ...PROBLEM_CODES, ...TOOL_CODES])("has its own words for %s", (code) => {
    expect(isKnownErrorCode(code)).toBe(true);
    const help = errorHelp(code);
    expect(help.sentence).toMatch(/^[A-Z].*\.$/);
    expect(help.nextStep).toMatch(/^[A-Z].*\.$/);
    expect(help.sentence).not.toContain(code);
  });

  it("still says something for a code it does not know", () => {
    expect(isKnownErrorCode("SOMETHING_NEW")).toBe(false);
    expect(errorHelp("SOMETHING_NEW").sentence).toContain("SOMETHING_NEW");
  });

  it("keeps the service's own words when they add something, and always gives the next step", () => {
    expect(plainErrorMessage("VALIDATION_ERROR", "currency must be EUR for this account")).toBe(
      "The Payouts Service refused the payment's details. (currency must be EUR for this account) Next: Read the service's reason, correct the row (amount, currency, accounts or delivery) and retry it.",
    );
    expect(plainErrorMessage("PAYMENT_FAILED", "the Payouts Service reports the payment failed")).toContain(
      "(the Payouts Service reports the payment failed)",
    );
    expect(plainErrorMessage("AMOUNT_ZERO", "")).toBe(
      "The amount is zero. Next: Remove the row or fill in the amount.",
    );
  });

  it("does not take a property of every object for a code", () => {
    expect(isKnownErrorCode("constructor")).toBe(false);
    expect(isKnownErrorCode("__proto__")).toBe(false);
  });
});
