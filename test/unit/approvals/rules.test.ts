import { describe, expect, it } from "vitest";
import {
  type ApprovalPolicy,
  approvalExpiry,
  isSystemIdentity,
  parseApprovalThresholds,
  SYSTEM_IDENTITIES,
  thresholdsReached,
} from "../../../src/approvals/index.js";
import { ConfigError, loadConfig } from "../../../src/config/index.js";

const policy = (thresholds: string, required = 1): ApprovalPolicy => ({
  thresholds: parseApprovalThresholds(thresholds),
  required,
  expiresHours: 72,
});

describe("APPROVAL_THRESHOLDS", () => {
  it("reads CURRENCY:amount in major units into minor units of each currency", () => {
    expect(parseApprovalThresholds("USD:10000, eur:9000.50,JPY:500000")).toEqual([
      { currency: "USD", amount: "10000", minor: 1_000_000 },
      { currency: "EUR", amount: "9000.50", minor: 900_050 },
      { currency: "JPY", amount: "500000", minor: 500_000 },
    ]);
    expect(parseApprovalThresholds("*:0")).toEqual([{ currency: "*", amount: "0", minor: 0 }]);
    expect(parseApprovalThresholds("  ")).toEqual([]);
  });

  it.each([
    ["USD", "not CURRENCY:amount"],
    ["USD:10,000", '"000" is not CURRENCY:amount'],
    ["USD:10 000", "plain digits"],
    ["USD:$100", "plain digits"],
    ["USD:12.345", "more decimals"],
    ["JPY:10.5", "more decimals"],
    ["XYZ:100", "not an ISO 4217"],
    ["USD:-5", "plain digits"],
    ["USD:1,USD:2", "listed twice"],
    ["*:0.5", "whole number"],
  ])("refuses %s, saying why", (text, why) => {
    expect(() => parseApprovalThresholds(text)).toThrow(why);
  });

  it("is validated with the rest of the environment, naming the variable", () => {
    expect(() => loadConfig({ APPROVAL_THRESHOLDS: "USD:ten" })).toThrow(ConfigError);
    expect(() => loadConfig({ APPROVAL_THRESHOLDS: "USD:ten" })).toThrow(/APPROVAL_THRESHOLDS: "USD:ten"/);
    expect(() => loadConfig({ APPROVALS_REQUIRED: "0" })).toThrow(/APPROVALS_REQUIRED/);
    expect(() => loadConfig({ APPROVAL_EXPIRES_HOURS: "-1" })).toThrow(/APPROVAL_EXPIRES_HOURS/);
    const c = loadConfig({
      APPROVAL_THRESHOLDS: "USD:10000",
      APPROVALS_REQUIRED: "2",
      APPROVAL_EXPIRES_HOURS: "0.5",
    });
    expect(c.approval).toEqual({
      thresholds: [{ currency: "USD", amount: "10000", minor: 1_000_000 }],
      required: 2,
      expiresHours: 0.5,
    });
  });

  it("defaults to no thresholds (nothing held), one approver, 72 hours", () => {
    expect(loadConfig({}).approval).toEqual({ thresholds: [], required: 1, expiresHours: 72 });
    expect(loadConfig({ APPROVAL_THRESHOLDS: " " }).approval).toEqual({
      thresholds: [],
      required: 1,
      expiresHours: 72,
    });
  });
});

describe("which batches need approval", () => {
  it("a batch whose total in a listed currency reaches its threshold (>=), and only that", () => {
    const p = policy("USD:10000,EUR:9000");
    expect(thresholdsReached(p, { USD: 999_999 })).toEqual([]);
    expect(thresholdsReached(p, { USD: 1_000_000 })).toEqual([
      { currency: "USD", total: 1_000_000, threshold: 1_000_000, rule: "USD" },
    ]);
    expect(thresholdsReached(p, { USD: 5, EUR: 900_000, GBP: 10 ** 12 }).map((r) => r.currency)).toEqual([
      "EUR",
    ]);
  });

  it("* covers every currency not listed, in whole major units of each; *:0 holds every batch", () => {
    expect(thresholdsReached(policy("*:0"), { JPY: 1 })).toHaveLength(1);
    const p = policy("USD:10000,*:100");
    expect(thresholdsReached(p, { JPY: 99 })).toEqual([]);
    expect(thresholdsReached(p, { JPY: 100 })).toEqual([
      { currency: "JPY", total: 100, threshold: 100, rule: "*" },
    ]);
    expect(thresholdsReached(p, { EUR: 10_000 })).toEqual([
      { currency: "EUR", total: 10_000, threshold: 10_000, rule: "*" },
    ]);
    expect(thresholdsReached(p, { USD: 10_000 })).toEqual([]);
  });

  it("expires after the configured hours", () => {
    const at = new Date("2026-11-23T10:00:00Z");
    expect(approvalExpiry({ ...policy("*:0"), expiresHours: 72 }, at).toISOString()).toBe(
      "2026-11-26T10:00:00.000Z",
    );
    expect(approvalExpiry({ ...policy("*:0"), expiresHours: 0.5 }, at).toISOString()).toBe(
      "2026-11-23T10:30:00.000Z",
    );
  });

  it("system identities (CLI, inbox, nightly run) are told apart from user and token names by a ':'", () => {
    expect(isSystemIdentity(SYSTEM_IDENTITIES.cli("ops"))).toBe(true);
    expect(isSystemIdentity(SYSTEM_IDENTITIES.inbox)).toBe(true);
    expect(isSystemIdentity(SYSTEM_IDENTITIES.schedule)).toBe(true);
    expect(isSystemIdentity("alice")).toBe(false);
  });
});
