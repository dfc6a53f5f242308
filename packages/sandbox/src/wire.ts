/**
 * The service's wire as the sandbox reads it from the spec (shared/spec/partner-payouts-api.md), written
 * without looking at the client: the client keeps its own reading, so a test that runs the client
 * against the sandbox compares two readings and a misreading on one side shows up as a failure.
 *
 * Where the spec shows a rule, the rule here is the spec's. Where it leaves a field's name "not shown",
 * both sides must still use one name or nothing could be exchanged: those names are marked
 * `NAMED, NOT IN SPEC` and listed in docs/sandbox.md. They are vocabulary, not rules.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------------------------------
// Headers (Conventions, Authentication, Events). Node lower-cases incoming header names.
// ---------------------------------------------------------------------------------------------------

export const HEADERS = {
  apiKey: "api-key",
  entity: "service-entity-id",
  idempotencyKey: "idempotency-key",
  sonarToken: "service-sonar-token",
  signature: "x-service-signature",
  deliveryId: "x-service-delivery-id",
} as const;

// ---------------------------------------------------------------------------------------------------
// Limits (the spec's "Limits" table)
// ---------------------------------------------------------------------------------------------------

export const PAGE_LIMIT_MAX = 50;
export const IDEMPOTENCY_KEY_MAX = 255;

/** `externalId`: at most 255 characters of letters, digits, `-` and `_`. */
export const ExternalId = z
  .string()
  .max(255)
  .regex(/^[A-Za-z0-9_-]+$/, "use only letters, digits, - and _");

/** `metadata`: at most 50 keys of 1 to 40 characters without `[` or `]`; values at most 100 characters. */
const MetadataKey = z
  .string()
  .min(1)
  .max(40)
  .refine((key) => !/[[\]]/.test(key), "a metadata key may not contain [ or ]");
export const Metadata = z
  .record(MetadataKey, z.string().max(100))
  .refine((m) => Object.keys(m).length <= 50, "at most 50 metadata keys");
export type Metadata = z.infer<typeof Metadata>;

/** Currency fields: `^[A-Za-z]{3}$` (ISO 4217, any case). */
const Currency = z.string().regex(/^[A-Za-z]{3}$/, "a three-letter ISO 4217 code");
const DateTime = z.iso.datetime({ offset: true });

const accountId = z.string().startsWith("acct_");
const attachmentId = z.string().startsWith("att_");

// ---------------------------------------------------------------------------------------------------
// Errors: the envelope's `type` values
// ---------------------------------------------------------------------------------------------------

export const ErrorType = z.enum([
  "invalid_request_error",
  "authentication_error",
  "authorization_error",
  "not_found_error",
  "conflict_error",
  "rate_limit_error",
  "service_unavailable_error",
  "internal_error",
]);
export type ErrorType = z.infer<typeof ErrorType>;

// ---------------------------------------------------------------------------------------------------
// Entity. The spec shows only the id, `businessType` and `externalId`/`metadata`.
// ---------------------------------------------------------------------------------------------------

export interface Entity {
  id: string;
  /** NAMED, NOT IN SPEC: the entity's display name. */
  name: string;
  businessType: string;
  externalId?: string;
  metadata?: Metadata;
  createdAt: string;
  updatedAt: string;
}

// ---------------------------------------------------------------------------------------------------
// Account
// ---------------------------------------------------------------------------------------------------

export const AccountType = z.enum([
  "ach",
  "check",
  "card",
  "domestic-wire",
  "virtual-card",
  "international-fx",
  "international-gusd",
]);
export type AccountType = z.infer<typeof AccountType>;

export const OwnershipType = z.enum(["internal", "external"]);
export type OwnershipType = z.infer<typeof OwnershipType>;

/** "fields may be absent when the stored record is incomplete": every part is optional. */
const AccountAddress = z.object({
  line1: z.string().optional(),
  line2: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  postalCode: z.string().optional(),
  /** NAMED, NOT IN SPEC: the country of an account's address, as on a beneficial owner's. */
  countryCode: z.string().optional(),
});

/** An account as answered (and as a seed file states it). Full bank identifiers are never answered. */
export const Account = z.object({
  id: accountId,
  ownershipType: OwnershipType,
  type: AccountType,
  /** NAMED, NOT IN SPEC: the display name of an internal account. */
  name: z.string().optional(),
  counterPartyName: z.string().optional(),
  counterPartyEmail: z.string().optional(),
  /** NAMED, NOT IN SPEC: the verification flag (internal accounts only). */
  isVerified: z.boolean().optional(),
  bankAccount: z
    .object({ accountType: z.string(), routingNumber: z.string(), accountNumberLast4: z.string() })
    .optional(),
  paperCheck: z.object({ printName: z.string(), address: AccountAddress }).optional(),
  /** NAMED, NOT IN SPEC: the wire object, `wire: { routingNumber, address }`. */
  wire: z.object({ routingNumber: z.string(), address: AccountAddress }).optional(),
  /** NAMED, NOT IN SPEC: the international object, `international: { currency, accountNumberLast4, address }`. */
  international: z
    .object({ currency: Currency, accountNumberLast4: z.string(), address: AccountAddress })
    .optional(),
  /** NAMED, NOT IN SPEC: a card's visible digits, `card: { last4 }`. */
  card: z.object({ last4: z.string() }).optional(),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export type Account = z.infer<typeof Account>;

/**
 * The currency an account is paid in. Only the international object carries one ("the ISO 4217
 * currency the counterparty is paid in"); every other rail, `international-gusd` included, is USD.
 */
export function accountCurrency(account: Pick<Account, "type" | "international">): string {
  if (account.type !== "international-fx" || account.international === undefined) return "USD";
  return account.international.currency.toUpperCase();
}

const routingNumber = z.string().regex(/^\d{9}$/, "nine digits (ABA routing number)");

/**
 * Account creation. The spec shows no payload: the sandbox takes the answered shape with full
 * identifiers in place of the last four. NAMED, NOT IN SPEC: `bankAccount.accountNumber`,
 * `international.iban` / `international.accountNumber`, `card.number`.
 */
export const AccountCreate = z.object({
  ownershipType: OwnershipType,
  type: AccountType,
  name: z.string().max(255).optional(),
  counterPartyName: z.string().max(255).optional(),
  counterPartyEmail: z.email().optional(),
  bankAccount: z.object({ accountType: z.string(), routingNumber, accountNumber: z.string() }).optional(),
  paperCheck: z.object({ printName: z.string(), address: AccountAddress }).optional(),
  wire: z.object({ routingNumber, address: AccountAddress }).optional(),
  international: z
    .object({
      currency: Currency,
      iban: z.string().optional(),
      accountNumber: z.string().optional(),
      address: AccountAddress,
    })
    .optional(),
  card: z.object({ number: z.string().regex(/^\d{12,19}$/, "12 to 19 digits") }).optional(),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
});
export type AccountCreate = z.infer<typeof AccountCreate>;

export const AccountUpdate = AccountCreate.pick({
  name: true,
  counterPartyName: true,
  counterPartyEmail: true,
  externalId: true,
  metadata: true,
});
export type AccountUpdate = z.infer<typeof AccountUpdate>;

// ---------------------------------------------------------------------------------------------------
// Payment
// ---------------------------------------------------------------------------------------------------

export const PaymentStatus = z.enum(["scheduled", "in-progress", "completed", "failed", "canceled"]);
export type PaymentStatus = z.infer<typeof PaymentStatus>;

/** Every value the payment's `deliveryPreference` can take (the response table's list). */
export const DeliveryPreference = z.enum([
  "standard-ach",
  "same-day-ach",
  "rtp",
  "standard-check",
  "express-check",
  "overnight-check",
  "domestic-wire",
  "instant-domestic-wire",
  "virtual-card",
  "instant-virtual-card",
  "international-fx",
  "fast-international-fx",
  "international-gusd",
]);
export type DeliveryPreference = z.infer<typeof DeliveryPreference>;

/** "the two international-fx values use the FX shape; every other value uses the USD shape." */
const FX_SHAPE_PREFERENCES = ["international-fx", "fast-international-fx"] as const;

export function isFxDeliveryPreference(p: string): boolean {
  return (FX_SHAPE_PREFERENCES as readonly string[]).includes(p);
}

/** NAMED, NOT IN SPEC: a fee item beyond `chargeTo` is `{ type, amount, currency }`, amount in minor units. */
export interface Fee {
  type: string;
  amount: number;
  currency: string;
  chargeTo: "originator" | "receiver";
}

/** `compliance` is discriminated by `type`; only `goods-and-services` exists. */
const Compliance = z.object({ type: z.literal("goods-and-services"), purpose: z.string().min(1).max(255) });

/**
 * The fields both payload shapes share. NAMED, NOT IN SPEC: `originatingAccountId`,
 * `receivingAccountId` (the names the payment list filters use), `payerMemo`, `recipientNote`.
 * The spec gives no length for the two notes or the purpose: 255 is the sandbox's choice.
 */
const paymentCreateFields = {
  amount: z.number().int().positive(),
  originatingAccountId: accountId,
  receivingAccountId: accountId,
  payerMemo: z.string().max(255).optional(),
  recipientNote: z.string().max(255).optional(),
  compliance: Compliance.optional(),
  attachmentId: attachmentId.optional(),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
};

/** USD shape: every non-FX preference; `currency` may be omitted (USD). */
export const UsdPaymentCreate = z.object({
  ...paymentCreateFields,
  deliveryPreference: DeliveryPreference.exclude([...FX_SHAPE_PREFERENCES]),
  currency: Currency.optional(),
});

/** FX shape: the two FX preferences; `currency` is required, and a quote token may be sent. */
export const FxPaymentCreate = z.object({
  ...paymentCreateFields,
  deliveryPreference: DeliveryPreference.extract([...FX_SHAPE_PREFERENCES]),
  currency: Currency,
  fxQuoteToken: z.string().optional(),
});

export type PaymentCreate = Omit<z.infer<typeof UsdPaymentCreate>, "deliveryPreference"> & {
  deliveryPreference: DeliveryPreference;
  fxQuoteToken?: string;
};

/** NAMED, NOT IN SPEC: why a payment failed or was canceled, `failureReason: { code, message }`. */
export const PaymentFailureReason = z.object({ code: z.string(), message: z.string() });
export type PaymentFailureReason = z.infer<typeof PaymentFailureReason>;

/**
 * A payment as answered. NAMED, NOT IN SPEC: `amount` and `currency` (what the counterparty
 * receives), and for a converted payment `fx: { debitAmount, usdToForeignRate }`.
 */
export interface Payment {
  id: string;
  status: PaymentStatus;
  deliveryPreference: DeliveryPreference;
  amount: number;
  currency: string;
  originatingAccountId: string;
  receivingAccountId: string;
  payerMemo?: string;
  recipientNote?: string;
  compliance?: z.infer<typeof Compliance>;
  attachmentId?: string;
  fees: Fee[];
  fx?: { debitAmount: number; usdToForeignRate: number };
  failureReason?: PaymentFailureReason;
  externalId?: string;
  metadata?: Metadata;
  createdAt: string;
  updatedAt: string;
}

/**
 * Payment edit (`PATCH /payments/{id}`, shape not shown). NAMED, NOT IN SPEC: `status: "canceled"`
 * cancels; the notes and metadata edit. `attachmentId` is refused: the spec says it is set at creation
 * only. Unknown fields are refused rather than ignored, so a client's misspelling is not taken as done.
 */
export const PaymentUpdate = z
  .object({
    status: z.literal("canceled").optional(),
    payerMemo: paymentCreateFields.payerMemo,
    recipientNote: paymentCreateFields.recipientNote,
    metadata: Metadata.optional(),
  })
  .strict();
export type PaymentUpdate = z.infer<typeof PaymentUpdate>;

// ---------------------------------------------------------------------------------------------------
// Attachments (shape not shown)
// ---------------------------------------------------------------------------------------------------

/** NAMED, NOT IN SPEC: JSON `{ fileName, contentType, contentBase64 }`, at most 10 MiB decoded. */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
export const AttachmentCreate = z.object({
  fileName: z.string().min(1).max(255),
  contentType: z.string().min(1).max(255),
  contentBase64: z.string().min(1),
});

export interface Attachment {
  id: string;
  fileName: string;
  contentType: string;
  size: number;
  createdAt: string;
}

// ---------------------------------------------------------------------------------------------------
// Limitations
// ---------------------------------------------------------------------------------------------------

/** The four limitable write operations the spec names today (more may come). */
export const KNOWN_OPERATIONS = [
  "payment.domestic:write",
  "payment.international:write",
  "account.internal:write",
  "account.external:write",
] as const;

/** A reason: `code`, `message`, `missingFields`, and the contact field (NAMED, NOT IN SPEC: `contactEmail`). */
export const LimitationReason = z.object({
  code: z.string(),
  message: z.string(),
  missingFields: z.array(z.string()),
  contactEmail: z.string().optional(),
});
export type LimitationReason = z.infer<typeof LimitationReason>;

export interface Capability {
  operation: string;
  allowed: boolean;
  reasons: LimitationReason[];
}
export interface Limitations {
  capabilities: Capability[];
}

/**
 * Which limitable operation a payment needs "follows from the receiving account's rail". The spec
 * does not list the rails of each: the two `international-*` rails are read as international, the
 * others (all USD, paid inside the US) as domestic.
 */
export function paymentOperationFor(
  receivingType: AccountType,
): "payment.domestic:write" | "payment.international:write" {
  return receivingType.startsWith("international-")
    ? "payment.international:write"
    : "payment.domestic:write";
}

// ---------------------------------------------------------------------------------------------------
// Beneficial owners
// ---------------------------------------------------------------------------------------------------

const OwnerAddress = z.object({
  line1: z.string().min(1),
  line2: z.string().optional(),
  city: z.string().min(1),
  /** "send an empty string where the country has none": present, possibly empty. */
  state: z.string(),
  postalCode: z.string().min(1),
  countryCode: z.string().regex(/^[A-Za-z]{2}$/, "ISO 3166-1 alpha-2"),
});

/** The fields a person has both in a request and in the answer. */
const ownerFields = {
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  dateOfBirth: z.iso.date(),
  address: OwnerAddress,
  usResident: z.boolean(),
  types: z.array(z.enum(["ubo", "director", "fx-account-holder"])).min(1),
  ownershipPercentage: z.number().min(0).max(1).optional(),
  jobTitle: z
    .enum([
      "chief-executive-officer",
      "chief-financial-officer",
      "managing-member",
      "general-partner",
      "president",
      "vice-president",
      "treasurer",
    ])
    .optional(),
  internationalIdType: z.enum(["passport", "driver-license", "national-id"]).optional(),
  email: z.string().optional(),
  phoneNumber: z.string().optional(),
};

/**
 * A person in the replacement request. Rules across fields (ubo needs a percentage, non-residents need
 * an id and a document, exactly one fx-account-holder) are checked in owners.ts, where the whole set is.
 * NAMED, NOT IN SPEC: the front identity document is `frontAttachmentId`.
 */
export const BeneficialOwnerInput = z.object({
  ...ownerFields,
  id: z.number().int().optional(),
  taxInfo: z.object({ type: z.literal("ssn"), identifier: z.string().min(1) }).optional(),
  internationalId: z.string().optional(),
  frontAttachmentId: attachmentId.optional(),
  backAttachmentId: attachmentId.optional(),
});
export type BeneficialOwnerInput = z.infer<typeof BeneficialOwnerInput>;
export const BeneficialOwnerReplace = z.object({ data: z.array(BeneficialOwnerInput) });

/** A person as answered: tax and international ids reduced to their last four, documents write-only. */
export const BeneficialOwner = z.object({
  ...ownerFields,
  id: z.number().int(),
  taxInfo: z.object({ type: z.string(), identifierLast4: z.string() }).optional(),
  internationalId: z.string().optional(),
  hasIdentityDocument: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export type BeneficialOwner = z.infer<typeof BeneficialOwner>;

// ---------------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------------

export const FxQuoteRequest = z.object({
  receivingAccountId: accountId,
  amount: z.number().int().positive(),
  currency: Currency.optional(),
  purpose: z.string().max(255).optional(),
});

export interface FxQuote {
  currency: string;
  foreignAmount: number;
  amount: number;
  usdToForeignRate: number;
  midMarketRate?: number;
  quoteToken: string;
  expiresAt: string;
}

/** The three tools whose shapes are not shown take the payment's own fields (NAMED, NOT IN SPEC). */
const toolPaymentFields = {
  deliveryPreference: DeliveryPreference,
  originatingAccountId: accountId,
  receivingAccountId: accountId,
};

export const FeeCalculatorRequest = z.object({
  ...toolPaymentFields,
  amount: z.number().int().positive(),
  currency: Currency.optional(),
});
export interface FeeCalculatorResult {
  fees: Fee[];
}

export const FastPaymentEligibilityRequest = z.object({
  ...toolPaymentFields,
  amount: z.number().int().positive(),
});
export interface FastPaymentEligibility {
  eligible: boolean;
  reasons: { code: string; message: string }[];
}

export const DeliveryEstimateRequest = z.object(toolPaymentFields);
export interface DeliveryEstimate {
  deliveryPreference: DeliveryPreference;
  estimatedDeliveryDate: string;
}

/** NAMED, NOT IN SPEC: `POST /accounts/link` takes `{ ownershipType }` (internal unless said). */
export const AccountLinkRequest = z.object({ ownershipType: OwnershipType.default("internal") });

// ---------------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------------

export const EVENT_TYPES = [
  "api.entity.created",
  "api.entity.updated",
  "api.account.created",
  "api.account.updated",
  "api.account.deleted",
  "api.payment.created",
  "api.payment.updated",
  "api.limitation.updated",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WebhookEndpoint {
  url: string;
  description?: string;
  events: EventType[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Partial update: only sent fields change; `events`, when sent, replaces the list and has at least one. */
export const WebhookEndpointUpdate = z.object({
  url: z.string().optional(),
  description: z.string().max(255).optional(),
  events: z.array(z.enum(EVENT_TYPES)).min(1).optional(),
  isActive: z.boolean().optional(),
});

/** The delivery payload: a notification naming the resource, not its state. */
export interface WebhookDelivery {
  event: EventType;
  messageId: string;
  id: string;
  entityId: string;
  occurredAt: string;
  externalId?: string;
  entityExternalId?: string;
  metadata?: Record<string, string>;
  data?: Record<string, unknown>;
}
