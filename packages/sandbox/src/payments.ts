/**
 * Payment creation, update and listing. `checkPaymentRules` is the pure rule set of the spec's payment
 * payload; the other functions apply it to the store.
 */
import { CARD_SUPERSEDED, cardCannotPay, needsEligibilityCheck, preferencesFor, railOf } from "./delivery.js";
import { badRequest, conflict, forbidden, notFound, parseOrThrow, validationError } from "./errors.js";
import { checkQuote, type FxPrice, hasRate, priceForeignAmount } from "./fx.js";
import { computeLimitations } from "./owners.js";
import { type ListQuery, cursorOf as listCursorOf } from "./pagination.js";
import type { StoredPayment } from "./payment-record.js";
import { fastPaymentEligibility } from "./rules.js";
import type { SandboxState } from "./state.js";
import {
  type Account,
  accountCurrency,
  type DeliveryPreference,
  FxPaymentCreate,
  isFxDeliveryPreference,
  type Payment,
  type PaymentCreate,
  PaymentStatus,
  PaymentUpdate,
  paymentOperationFor,
  UsdPaymentCreate,
} from "./wire.js";

/** Chooses the payload shape by `deliveryPreference`, as the spec says, and validates it. */
export function parsePaymentCreate(body: unknown): PaymentCreate {
  const pref = (body as { deliveryPreference?: unknown } | null)?.deliveryPreference;
  const isFx = typeof pref === "string" && isFxDeliveryPreference(pref as DeliveryPreference);
  return parseOrThrow(isFx ? FxPaymentCreate : UsdPaymentCreate, body) as PaymentCreate;
}

export interface RuleDecision {
  /** Upper-case currency the payee receives. */
  currency: string;
  /** Whether the payment converts from USD (an international-fx account in another currency). */
  converts: boolean;
  /** USD minor units debited before fees (for a conversion: priced at the current rate). */
  usdAmount: number;
  price?: FxPrice;
}

const field = (path: string, message: string) => [{ path, message }];

/**
 * The payment payload rules that depend only on the two accounts (pure). Throws the ApiError the
 * service answers. Order: account kinds, verification, rail, card-funded rules, currency, eligibility.
 */
export function checkPaymentRules(
  body: PaymentCreate,
  originating: Account,
  receiving: Account,
): RuleDecision {
  const pref = body.deliveryPreference;
  if (originating.ownershipType !== "internal") {
    throw badRequest("INVALID_ACCOUNT_TYPE", "originatingAccountId must be an internal account", {
      fields: field("originatingAccountId", "not an internal account"),
    });
  }
  if (receiving.ownershipType !== "external") {
    throw badRequest("INVALID_ACCOUNT_TYPE", "receivingAccountId must be an external account", {
      fields: field("receivingAccountId", "not an external account"),
    });
  }
  if (originating.type !== "ach" && originating.type !== "card") {
    throw badRequest("INVALID_ACCOUNT_TYPE", "originating account must be a bank (ach) or card account", {
      fields: field("originatingAccountId", `type ${originating.type} cannot fund payments`),
    });
  }
  if (originating.type === "ach" && originating.isVerified !== true) {
    throw badRequest("ACCOUNT_NOT_VERIFIED", "the originating bank account has not completed verification", {
      fields: field("originatingAccountId", "micro-deposit verification outstanding"),
    });
  }
  const allowed = preferencesFor(receiving.type);
  if (!allowed.includes(pref)) {
    const hint = allowed.length
      ? `use one of ${allowed.join(", ")}`
      : `no delivery preference pays a ${receiving.type} account`;
    throw validationError(
      `deliveryPreference ${pref} does not match the receiving ${receiving.type} account: ${hint}`,
      field("deliveryPreference", `rail ${railOf(pref)} does not match account type ${receiving.type}`),
    );
  }
  const cardFunded = originating.type === "card";
  if (cardFunded) {
    const replacement = CARD_SUPERSEDED[pref];
    if (replacement) {
      throw validationError(
        `${pref} is superseded from a card originating account: use ${replacement}`,
        field("deliveryPreference", `use ${replacement} from a card account`),
      );
    }
    if (cardCannotPay(receiving.type)) {
      throw validationError(
        "a virtual-card account cannot be paid from a card originating account",
        field("receivingAccountId", "virtual-card payee with card funding"),
      );
    }
  }
  const expected = accountCurrency(receiving);
  const given = (body.currency ?? "USD").toUpperCase();
  if (given !== expected) {
    throw validationError(
      `currency ${given} does not match the receiving account's currency ${expected}`,
      field("currency", `must be ${expected}`),
    );
  }
  const converts = expected !== "USD";
  let price: FxPrice | undefined;
  if (converts) {
    if (!hasRate(expected)) {
      throw badRequest("UNSUPPORTED_CURRENCY", `the sandbox has no rate for ${expected}`, {
        fields: field("currency", "unsupported"),
      });
    }
    price = priceForeignAmount(expected, body.amount);
  }
  const usdAmount = price ? price.usdAmount : body.amount;
  if (needsEligibilityCheck(originating.type, pref)) {
    const result = fastPaymentEligibility({ deliveryPreference: pref, usdAmount, originating, receiving });
    if (!result.eligible) {
      throw validationError(
        `${pref} is not available for this payment: ${result.reasons.map((r) => r.message).join(" ")}`,
        field("deliveryPreference", "ineligible faster variant"),
        { reasons: result.reasons },
      );
    }
  }
  return { currency: expected, converts, usdAmount, ...(price ? { price } : {}) };
}

/** Looks up an account of this entity or throws 404 naming the field. */
export function accountOf(state: SandboxState, entityId: string, id: string, path: string): Account {
  const stored = state.accounts.get(id);
  if (!stored || stored.entityId !== entityId) {
    throw notFound(`account ${id} not found`, { fields: field(path, "not found") });
  }
  return stored.account;
}

export function paymentOf(state: SandboxState, entityId: string, id: string): StoredPayment {
  const stored = state.payments.get(id);
  if (!stored || stored.entityId !== entityId) throw notFound(`payment ${id} not found`);
  return stored;
}

/** 403 when the entity's limitations forbid the operation this payment needs. */
export function assertPaymentAllowed(
  state: SandboxState,
  entityId: string,
  receivingType: Account["type"],
): void {
  const entity = state.entities.get(entityId);
  const operation = paymentOperationFor(receivingType);
  const capability = computeLimitations(
    state.owners.get(entityId) ?? [],
    entity?.restrictions ?? [],
  ).capabilities.find((c) => c.operation === operation);
  if (!capability || capability.allowed) return;
  const reasons = capability.reasons.map((r) => `${r.code}: ${r.message}`).join("; ");
  throw forbidden(
    operation === "payment.international:write" ? "INTERNATIONAL_NOT_ENABLED" : "BUSINESS_NOT_ELIGIBLE",
    `${operation} is not allowed for this entity (${reasons})`,
    { operation, reasons: capability.reasons },
  );
}

export interface CreatePaymentOptions {
  onCreated(stored: StoredPayment): void;
}

/** Validates and stores a payment (`toPayment()` is the 201 body). */
export function createPayment(
  state: SandboxState,
  entityId: string,
  rawBody: unknown,
  opts: CreatePaymentOptions,
): StoredPayment {
  const body = parsePaymentCreate(rawBody);
  // A reused externalId is reported first, so a resubmitted row always learns which payment it made.
  if (body.externalId !== undefined) {
    const existing = state.payments.findByExternalId(body.externalId);
    if (existing) {
      throw conflict(
        "DUPLICATE_EXTERNAL_ID",
        `externalId ${body.externalId} is already used by payment ${existing.id}`,
        {
          existingId: existing.id,
          fields: field("externalId", "already used"),
        },
      );
    }
  }
  const originating = accountOf(state, entityId, body.originatingAccountId, "originatingAccountId");
  const receiving = accountOf(state, entityId, body.receivingAccountId, "receivingAccountId");
  const decision = checkPaymentRules(body, originating, receiving);
  assertPaymentAllowed(state, entityId, receiving.type);

  if (body.attachmentId !== undefined) {
    const att = state.attachments.get(body.attachmentId);
    if (!att || att.entityId !== entityId) {
      throw notFound(`attachment ${body.attachmentId} not found`, {
        fields: field("attachmentId", "not found"),
      });
    }
  } else if (
    state.accounts.get(receiving.id)?.requiresAttachmentUntilPaid &&
    !state.payments.hasBeenPaid(receiving.id)
  ) {
    throw badRequest(
      "ATTACHMENT_REQUIRED",
      "this destination requires a supporting document (attachmentId) on its first payment",
      { fields: field("attachmentId", "required for this destination") },
    );
  }

  let usdAmount = decision.usdAmount;
  let rate = decision.price?.usdToForeignRate;
  if (body.fxQuoteToken !== undefined) {
    const check = decision.converts
      ? checkQuote(
          state.quotes.get(body.fxQuoteToken),
          { entityId, receivingAccountId: receiving.id, currency: decision.currency, amount: body.amount },
          state.now(),
        )
      : ({ ok: false, reason: "this payment does not convert currency" } as const);
    if (!check.ok) {
      throw badRequest("FX_QUOTE_INVALID", `fxQuoteToken cannot be used: ${check.reason}`, {
        fields: field("fxQuoteToken", check.reason),
      });
    }
    usdAmount = check.quote.price.usdAmount;
    rate = check.quote.price.usdToForeignRate;
  }

  const stored = state.payments.add({
    createdMs: state.now(),
    entityId,
    body,
    currency: decision.currency,
    originatingAccountId: originating.id,
    receivingAccountId: receiving.id,
    fx:
      decision.converts && rate !== undefined
        ? { debitAmount: usdAmount, usdToForeignRate: rate }
        : undefined,
    originatingType: originating.type,
  });
  state.emit("api.payment.created", {
    id: stored.id,
    entityId,
    externalId: stored.externalId,
    metadata: stored.metadata,
  });
  opts.onCreated(stored);
  return stored;
}

/** PATCH /payments/{id}: edits and cancellation, only while scheduled. */
export function updatePayment(state: SandboxState, entityId: string, id: string, rawBody: unknown): Payment {
  const stored = paymentOf(state, entityId, id);
  if (rawBody !== null && typeof rawBody === "object" && "attachmentId" in rawBody) {
    throw validationError("attachmentId is set at creation only and cannot be changed", [
      { path: "attachmentId", message: "cannot be changed" },
    ]);
  }
  const body = parseOrThrow(PaymentUpdate, rawBody);
  const p = stored;
  const edits =
    body.payerMemo !== undefined || body.recipientNote !== undefined || body.metadata !== undefined;
  if (body.status === "canceled" && p.status !== "scheduled") {
    throw conflict(
      "PAYMENT_NOT_CANCELABLE",
      `payment ${id} is ${p.status}; only a scheduled payment can be canceled`,
    );
  }
  if (edits && p.status !== "scheduled") {
    throw conflict(
      "PAYMENT_NOT_EDITABLE",
      `payment ${id} is ${p.status}; only a scheduled payment can be edited`,
    );
  }
  if (!edits && body.status === undefined) return p.toPayment();
  if (edits) p.beforeEdit();
  if (body.payerMemo !== undefined) p.payerMemo = body.payerMemo;
  if (body.recipientNote !== undefined) p.recipientNote = body.recipientNote;
  if (body.metadata !== undefined) state.payments.setMetadata(stored, body.metadata);
  if (body.status === "canceled") state.payments.setStatus(stored, "canceled");
  p.updatedMs = state.now();
  state.emit("api.payment.updated", { id, entityId, externalId: p.externalId, metadata: p.metadata });
  return p.toPayment();
}

/** The payment a list cursor names; any payment id is a valid cursor, another id is 400. */
function cursorOf(state: SandboxState, q: ListQuery): StoredPayment | undefined {
  return listCursorOf(q, (id) => state.payments.get(id));
}

export function listPayments(
  state: SandboxState,
  entityId: string,
  q: ListQuery,
  params: URLSearchParams,
): { data: Payment[]; hasMore: boolean } {
  const status = params.get("status");
  const parsedStatus = status === null ? undefined : PaymentStatus.safeParse(status);
  if (parsedStatus && !parsedStatus.success) {
    throw validationError(`status must be one of ${PaymentStatus.options.join(", ")}`, [
      { path: "status", message: "unknown status" },
    ]);
  }
  const originating = params.get("originatingAccountId");
  const receiving = params.get("receivingAccountId");
  const page = state.payments.page(
    q,
    {
      entityId,
      ...(parsedStatus?.data ? { status: parsedStatus.data } : {}),
      ...(originating !== null ? { originatingAccountId: originating } : {}),
      ...(receiving !== null ? { receivingAccountId: receiving } : {}),
    },
    cursorOf(state, q),
  );
  return { data: page.data.map((p) => p.toPayment()), hasMore: page.hasMore };
}
