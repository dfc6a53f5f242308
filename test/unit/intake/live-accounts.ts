/** Accounts as the service lists them, for live data built in unit tests of the intake. */
import type { Account, AccountType } from "../../../src/payouts-api/wire-types.js";

const now = "2026-01-01T00:00:00.000Z";

/** An account named by its external id; an internal ACH account is verified unless `extra` says otherwise. */
export function account(
  externalId: string,
  ownershipType: "internal" | "external",
  type: AccountType,
  extra: Partial<Account> = {},
): Account {
  const verified = type === "ach" && ownershipType === "internal" ? { isVerified: true } : {};
  return {
    id: `acct_${externalId.replace(/-/g, "_")}`,
    externalId,
    ownershipType,
    type,
    createdAt: now,
    updatedAt: now,
    ...verified,
    ...extra,
  };
}
