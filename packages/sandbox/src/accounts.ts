/**
 * Accounts: creation (full identifiers kept in memory, only last four returned), update, deletion
 * and listing with the verification refresh the spec describes.
 */

import { conflict, type FieldIssue, forbidden, notFound, parseOrThrow, validationError } from "./errors.js";
import { newId } from "./ids.js";
import { computeLimitations } from "./owners.js";
import { type ListQuery, matchesCommonFilters, paginate } from "./pagination.js";
import type { AccountSecrets, SandboxState, StoredAccount } from "./state.js";
import { type Account, AccountCreate, AccountType, AccountUpdate, OwnershipType } from "./wire.js";

/**
 * Sandbox verification rule: an unverified internal `ach` account whose metadata has
 * `sandboxVerifyAfterMs` (a number, as a string) becomes verified on the first account listing at
 * least that many ms after its creation. Without the key it stays unverified.
 */
export const VERIFY_AFTER_METADATA_KEY = "sandboxVerifyAfterMs";

const last4 = (s: string) => s.replace(/\s+/g, "").slice(-4);

/** The detail object each account type needs at creation. */
function requiredDetails(input: AccountCreate): FieldIssue[] {
  const need = (key: keyof AccountCreate, why: string): FieldIssue[] =>
    input[key] === undefined ? [{ path: key, message: why }] : [];
  switch (input.type) {
    case "ach":
      return need("bankAccount", "required for an ach account");
    case "check":
      return input.ownershipType === "external" ? need("paperCheck", "required for a check account") : [];
    case "domestic-wire":
      return need("wire", "required for a domestic-wire account");
    case "card":
    case "virtual-card":
      return need("card", `required for a ${input.type} account`);
    case "international-fx": {
      const issues = need("international", "required for an international-fx account");
      if (input.international && !input.international.iban && !input.international.accountNumber) {
        issues.push({ path: "international.iban", message: "iban or accountNumber is required" });
      }
      return issues;
    }
    default:
      return [];
  }
}

function assertAccountWriteAllowed(
  state: SandboxState,
  entityId: string,
  ownership: Account["ownershipType"],
): void {
  const operation = `account.${ownership}:write`;
  const entity = state.entities.get(entityId);
  const cap = computeLimitations(
    state.owners.get(entityId) ?? [],
    entity?.restrictions ?? [],
  ).capabilities.find((c) => c.operation === operation);
  if (cap && !cap.allowed) {
    throw forbidden(
      "BUSINESS_NOT_ELIGIBLE",
      `${operation} is not allowed for this entity (${cap.reasons.map((r) => r.code).join(", ")})`,
      { operation, reasons: cap.reasons },
    );
  }
}

function assertExternalIdFree(state: SandboxState, externalId: string | undefined, self?: string): void {
  if (externalId === undefined) return;
  const existing = state.findByExternalId(state.accounts, externalId);
  if (existing && existing.id !== self) {
    throw conflict(
      "DUPLICATE_EXTERNAL_ID",
      `externalId ${externalId} is already used by account ${existing.id}`,
      {
        existingId: existing.id,
        fields: [{ path: "externalId", message: "already used" }],
      },
    );
  }
}

export function createAccount(state: SandboxState, entityId: string, rawBody: unknown): Account {
  const input = parseOrThrow(AccountCreate, rawBody);
  const missing = requiredDetails(input);
  if (missing.length)
    throw validationError(`Invalid account: ${missing.map((m) => m.path).join(", ")}`, missing);
  assertAccountWriteAllowed(state, entityId, input.ownershipType);
  assertExternalIdFree(state, input.externalId);
  const nowMs = state.now();
  const iso = new Date(nowMs).toISOString();
  const id = newId("acct");
  const secrets: AccountSecrets = {};
  const account: Account = {
    id,
    ownershipType: input.ownershipType,
    type: input.type,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.ownershipType === "external" && input.counterPartyName !== undefined
      ? { counterPartyName: input.counterPartyName }
      : {}),
    ...(input.ownershipType === "external" && input.counterPartyEmail !== undefined
      ? { counterPartyEmail: input.counterPartyEmail }
      : {}),
    // New bank accounts start with micro-deposits outstanding; internal cards are usable at once.
    ...(input.ownershipType === "internal" ? { isVerified: input.type !== "ach" } : {}),
    ...(input.externalId !== undefined ? { externalId: input.externalId } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
    createdAt: iso,
    updatedAt: iso,
  };
  if (input.bankAccount) {
    secrets.accountNumber = input.bankAccount.accountNumber;
    account.bankAccount = {
      accountType: input.bankAccount.accountType,
      routingNumber: input.bankAccount.routingNumber,
      accountNumberLast4: last4(input.bankAccount.accountNumber),
    };
  }
  if (input.paperCheck) account.paperCheck = input.paperCheck;
  if (input.wire) account.wire = input.wire;
  if (input.international) {
    const full = input.international.iban ?? input.international.accountNumber ?? "";
    if (input.international.iban) secrets.iban = input.international.iban;
    if (input.international.accountNumber) secrets.accountNumber = input.international.accountNumber;
    account.international = {
      currency: input.international.currency.toUpperCase(),
      accountNumberLast4: last4(full),
      address: input.international.address,
    };
  }
  if (input.card) {
    secrets.cardNumber = input.card.number;
    account.card = { last4: last4(input.card.number) };
  }
  state.accounts.set(id, {
    id,
    seq: state.nextSeq(),
    createdMs: nowMs,
    externalId: input.externalId,
    metadata: input.metadata,
    entityId,
    requiresAttachmentUntilPaid: false,
    secrets,
    account,
  });
  state.emit("api.account.created", {
    id,
    entityId,
    externalId: input.externalId,
    metadata: input.metadata,
    data: { ownershipType: account.ownershipType, accountType: account.type },
  });
  return account;
}

export function storedAccountOf(state: SandboxState, entityId: string, id: string): StoredAccount {
  const stored = state.accounts.get(id);
  if (!stored || stored.entityId !== entityId) throw notFound(`account ${id} not found`);
  return stored;
}

export function updateAccount(state: SandboxState, entityId: string, id: string, rawBody: unknown): Account {
  const stored = storedAccountOf(state, entityId, id);
  const input = parseOrThrow(AccountUpdate, rawBody);
  assertExternalIdFree(state, input.externalId, id);
  const a = stored.account;
  if (input.name !== undefined) a.name = input.name;
  if (a.ownershipType === "external") {
    if (input.counterPartyName !== undefined) a.counterPartyName = input.counterPartyName;
    if (input.counterPartyEmail !== undefined) a.counterPartyEmail = input.counterPartyEmail;
  }
  if (input.externalId !== undefined) {
    a.externalId = input.externalId;
    stored.externalId = input.externalId;
  }
  if (input.metadata !== undefined) {
    a.metadata = input.metadata;
    stored.metadata = input.metadata;
  }
  a.updatedAt = state.isoNow();
  state.emit("api.account.updated", { id, entityId, externalId: a.externalId, metadata: a.metadata });
  return a;
}

export function deleteAccount(
  state: SandboxState,
  entityId: string,
  id: string,
): { id: string; deleted: true } {
  const stored = storedAccountOf(state, entityId, id);
  const p = state.payments.oldestOpenPaymentOf(id);
  if (p) {
    throw conflict("ACCOUNT_IN_USE", `account ${id} is used by payment ${p.id}, which is ${p.status}`, {
      paymentId: p.id,
    });
  }
  state.accounts.delete(id);
  state.emit("api.account.deleted", {
    id,
    entityId,
    externalId: stored.account.externalId,
    metadata: stored.account.metadata,
    data: { ownershipType: stored.account.ownershipType, accountType: stored.account.type },
  });
  return { id, deleted: true };
}

/** Applies the sandbox verification rule to every unverified internal bank account of the entity. */
export function refreshVerification(state: SandboxState, entityId: string): void {
  const now = state.now();
  for (const stored of state.accountsOf(entityId)) {
    const a = stored.account;
    if (a.ownershipType !== "internal" || a.type !== "ach" || a.isVerified) continue;
    const after = Number(a.metadata?.[VERIFY_AFTER_METADATA_KEY]);
    if (!Number.isFinite(after) || a.metadata?.[VERIFY_AFTER_METADATA_KEY] === undefined) continue;
    if (now - stored.createdMs < after) continue;
    a.isVerified = true;
    a.updatedAt = new Date(now).toISOString();
    state.emit("api.account.updated", { id: a.id, entityId, externalId: a.externalId, metadata: a.metadata });
  }
}

export function listAccounts(
  state: SandboxState,
  entityId: string,
  q: ListQuery,
  params: URLSearchParams,
): { data: Account[]; hasMore: boolean } {
  const ownership = params.get("ownershipType");
  const type = params.get("type");
  if (ownership !== null && !OwnershipType.safeParse(ownership).success) {
    throw validationError("ownershipType must be internal or external", [
      { path: "ownershipType", message: "unknown value" },
    ]);
  }
  if (type !== null && !AccountType.safeParse(type).success) {
    throw validationError(`type must be one of ${AccountType.options.join(", ")}`, [
      { path: "type", message: "unknown account type" },
    ]);
  }
  refreshVerification(state, entityId);
  const items = state
    .accountsOf(entityId)
    .filter(
      (a) =>
        matchesCommonFilters(a, q) &&
        (ownership === null || a.account.ownershipType === ownership) &&
        (type === null || a.account.type === type),
    );
  const page = paginate(items, q, state.accounts);
  return { data: page.data.map((a) => a.account), hasMore: page.hasMore };
}
