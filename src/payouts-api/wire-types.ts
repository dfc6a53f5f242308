/**
 * Wire types of the Partner Payouts Service (shared/spec/partner-payouts-api.md).
 *
 * This is the client's one place where the names the spec leaves unshown are chosen, so pointing at
 * the real service changes this file only. Every chosen name is marked `ASSUMPTION` (docs/design.md
 * §7). The sandbox (packages/sandbox) reads the spec on its own and must use the same names, or the
 * tests that run the client against it fail: docs/sandbox.md lists them.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------------------------------
// Enumerations and shared field rules
// ---------------------------------------------------------------------------------------------------

export const ACCOUNT_TYPES = [
  "ach",
  "check",
  "card",
  "domestic-wire",
  "virtual-card",
  "international-fx",
  "international-gusd",
] as const;
export const AccountType = z.enum(ACCOUNT_TYPES);
export type AccountType = z.infer<typeof AccountType>;

export const OwnershipType = z.enum(["internal", "external"]);
export type OwnershipType = z.infer<typeof OwnershipType>;

export const DELIVERY_PREFERENCES = [
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
] as const;
export const DeliveryPreference = z.enum(DELIVERY_PREFERENCES);
export type DeliveryPreference = z.infer<typeof DeliveryPreference>;

/** The two values that select the FX payload shape; every other value uses the USD shape. */
export const FX_DELIVERY_PREFERENCES = ["international-fx", "fast-international-fx"] as const;
export const USD_DELIVERY_PREFERENCES = DELIVERY_PREFERENCES.filter(
  (p): p is Exclude<DeliveryPreference, (typeof FX_DELIVERY_PREFERENCES)[number]> =>
    !(FX_DELIVERY_PREFERENCES as readonly string[]).includes(p),
);

export function isFxDeliveryPreference(p: DeliveryPreference): boolean {
  return (FX_DELIVERY_PREFERENCES as readonly string[]).includes(p);
}

export const PaymentStatus = z.enum(["scheduled", "in-progress", "completed", "failed", "canceled"]);
export type PaymentStatus = z.infer<typeof PaymentStatus>;
export const TERMINAL_PAYMENT_STATUSES: readonly PaymentStatus[] = ["completed", "failed", "canceled"];

export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9_-]+$/;
export const EXTERNAL_ID_MAX = 255;
export const ExternalId = z.string().min(1).max(EXTERNAL_ID_MAX).regex(EXTERNAL_ID_PATTERN);

export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_VALUE_MAX = 100;
export const Metadata = z
  .record(
    z
      .string()
      .min(1)
      .max(METADATA_KEY_MAX)
      .refine((k) => !k.includes("[") && !k.includes("]"), "metadata keys may not contain [ or ]"),
    z.string().max(METADATA_VALUE_MAX),
  )
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `at most ${METADATA_MAX_KEYS} metadata keys`);
export type Metadata = z.infer<typeof Metadata>;

export const CurrencyCode = z.string().regex(/^[A-Za-z]{3}$/);
export const IsoDateTime = z.string().datetime({ offset: true });
export const IDEMPOTENCY_KEY_MAX = 255;
export const PAGE_LIMIT_MAX = 50;

const created = {
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
};

// ---------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------

export const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "authorization_error",
  "not_found_error",
  "conflict_error",
  "rate_limit_error",
  "service_unavailable_error",
  "internal_error",
] as const;
export const ErrorType = z.enum(ERROR_TYPES);
export type ErrorType = z.infer<typeof ErrorType>;

export const ERROR_CODES = [
  "VALIDATION_ERROR",
  "INVALID_ACCOUNT_TYPE",
  "ACCOUNT_NOT_VERIFIED",
  "INVALID_DELIVERY_PREFERENCE",
  "MCC_REQUIRED",
  "MERCHANT_ADDRESS_REQUIRED",
  "GOODS_RECEIVED_REQUIRED",
  "IDEMPOTENCY_KEY_REQUIRED",
  "FEE_CALCULATION_FAILED",
  "UNSUPPORTED_CURRENCY",
  "FX_QUOTE_INVALID",
  "ATTACHMENT_REQUIRED",
  "COMPLIANCE_UPLOAD_FAILED",
  "ATTACHMENT_UPLOAD_FAILED",
  "INTERNATIONAL_NOT_ENABLED",
  "ENTITY_ONBOARDING_INCOMPLETE",
  "UNAUTHORIZED",
  "NOT_FOUND",
  "NO_ACTIVE_API_KEY",
  "DUPLICATE_ENTITY",
  "DUPLICATE_ACCOUNT",
  "DUPLICATE_PAYMENT",
  "DUPLICATE_EXTERNAL_ID",
  "ACCOUNT_IN_USE",
  "BUSINESS_NOT_ELIGIBLE",
  "PAYMENT_NOT_EDITABLE",
  "PAYMENT_NOT_CANCELABLE",
  "IDEMPOTENCY_KEY_REUSED",
  "IDEMPOTENCY_KEY_IN_PROGRESS",
  "IDEMPOTENCY_STORE_UNAVAILABLE",
  "INTERNAL_ERROR",
] as const;
/**
 * ASSUMPTION: codes the spec does not list are still accepted as plain strings (the service may add
 * some), and a few statuses carry no specific code in the spec ("not specific"): the sandbox then
 * sends `VALIDATION_ERROR` (400), `FORBIDDEN` (403), `RATE_LIMITED` (429) or `SERVICE_UNAVAILABLE` (503).
 */
export const ErrorCode = z.string().min(1);
export type KnownErrorCode = (typeof ERROR_CODES)[number];

export const ErrorEnvelope = z.object({
  error: z.object({
    type: z.string(),
    code: ErrorCode,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

// ---------------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------------

export function listEnvelope<T extends z.ZodTypeAny>(item: T) {
  return z.object({ data: z.array(item), hasMore: z.boolean() });
}
export type ListEnvelope<T> = { data: T[]; hasMore: boolean };

export interface PageParams {
  limit?: number;
  startingAfter?: string;
  endingBefore?: string;
  externalId?: string;
  createdGte?: string;
  createdLte?: string;
  metadata?: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------------
// Entity
// ---------------------------------------------------------------------------------------------------

export const BusinessType = z.string();
export const Entity = z.object({
  id: z.string().startsWith("ent_"),
  /** ASSUMPTION: the entity's display name is `name`. */
  name: z.string(),
  businessType: BusinessType,
  ...created,
});
export type Entity = z.infer<typeof Entity>;

// ---------------------------------------------------------------------------------------------------
// Account
// ---------------------------------------------------------------------------------------------------

export const Address = z.object({
  line1: z.string().optional(),
  line2: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  postalCode: z.string().optional(),
  /** ASSUMPTION: addresses on accounts carry `countryCode` (ISO 3166-1 alpha-2) like owner addresses. */
  countryCode: z.string().optional(),
});
export type Address = z.infer<typeof Address>;

export const BankAccount = z.object({
  accountType: z.string(),
  routingNumber: z.string(),
  accountNumberLast4: z.string(),
});

export const PaperCheck = z.object({ printName: z.string(), address: Address });

/** ASSUMPTION: the wire object of a `domestic-wire` account is named `wire`. */
export const WireDetails = z.object({ routingNumber: z.string(), address: Address });

/** ASSUMPTION: the international object of an `international-fx` account is named `international`. */
export const InternationalDetails = z.object({
  currency: CurrencyCode,
  accountNumberLast4: z.string(),
  address: Address,
});

/** ASSUMPTION: a virtual-card or card account exposes `card.last4` (never a full card number). */
export const CardDetails = z.object({ last4: z.string() });

export const Account = z.object({
  id: z.string().startsWith("acct_"),
  ownershipType: OwnershipType,
  type: AccountType,
  /** ASSUMPTION: internal accounts carry a display name, `name`. */
  name: z.string().optional(),
  counterPartyName: z.string().optional(),
  counterPartyEmail: z.string().optional(),
  /** ASSUMPTION: the verification flag is `isVerified`; internal accounts only. */
  isVerified: z.boolean().optional(),
  bankAccount: BankAccount.optional(),
  paperCheck: PaperCheck.optional(),
  wire: WireDetails.optional(),
  international: InternationalDetails.optional(),
  card: CardDetails.optional(),
  ...created,
});
export type Account = z.infer<typeof Account>;
export const AccountList = listEnvelope(Account);

/** The currency an account is paid in: its international currency, else USD. */
export function accountCurrency(a: Pick<Account, "type" | "international">): string {
  return a.type === "international-fx" && a.international ? a.international.currency.toUpperCase() : "USD";
}

/**
 * Account create payload. Full bank identifiers are accepted here and stored; responses only ever
 * carry their last four characters.
 * ASSUMPTION: the full numbers are `bankAccount.accountNumber`, `international.iban` or
 * `international.accountNumber`, `card.number`.
 */
export const AccountCreate = z.object({
  ownershipType: OwnershipType,
  type: AccountType,
  name: z.string().max(255).optional(),
  counterPartyName: z.string().max(255).optional(),
  counterPartyEmail: z.string().email().optional(),
  bankAccount: z
    .object({
      accountType: z.string(),
      routingNumber: z.string().regex(/^\d{9}$/),
      accountNumber: z.string(),
    })
    .optional(),
  paperCheck: PaperCheck.optional(),
  wire: z.object({ routingNumber: z.string().regex(/^\d{9}$/), address: Address }).optional(),
  international: z
    .object({
      currency: CurrencyCode,
      iban: z.string().optional(),
      accountNumber: z.string().optional(),
      address: Address,
    })
    .optional(),
  card: z.object({ number: z.string().regex(/^\d{12,19}$/) }).optional(),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
});
export type AccountCreate = z.infer<typeof AccountCreate>;

export const AccountUpdate = z.object({
  name: z.string().max(255).optional(),
  counterPartyName: z.string().max(255).optional(),
  counterPartyEmail: z.string().email().optional(),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
});
export type AccountUpdate = z.infer<typeof AccountUpdate>;

export interface AccountListParams extends PageParams {
  ownershipType?: OwnershipType;
  type?: AccountType;
}

// ---------------------------------------------------------------------------------------------------
// Payment
// ---------------------------------------------------------------------------------------------------

export const FeeChargeTo = z.enum(["originator", "receiver"]);
/** ASSUMPTION: a fee item is `{ type, amount, currency, chargeTo }` (amount in minor units). */
export const Fee = z.object({
  type: z.string(),
  amount: z.number().int().nonnegative(),
  currency: CurrencyCode,
  chargeTo: FeeChargeTo,
});
export type Fee = z.infer<typeof Fee>;

export const Compliance = z.object({
  type: z.literal("goods-and-services"),
  purpose: z.string().min(1).max(255),
});
export type Compliance = z.infer<typeof Compliance>;

const PAYER_MEMO_MAX = 255;
const RECIPIENT_NOTE_MAX = 255;
export const TEXT_LIMITS = {
  payerMemo: PAYER_MEMO_MAX,
  recipientNote: RECIPIENT_NOTE_MAX,
  purpose: 255,
} as const;

const paymentCreateCommon = {
  amount: z.number().int().positive(),
  originatingAccountId: z.string().startsWith("acct_"),
  receivingAccountId: z.string().startsWith("acct_"),
  /** ASSUMPTION: the two note fields are `payerMemo` and `recipientNote`. */
  payerMemo: z.string().max(PAYER_MEMO_MAX).optional(),
  recipientNote: z.string().max(RECIPIENT_NOTE_MAX).optional(),
  compliance: Compliance.optional(),
  attachmentId: z.string().startsWith("att_").optional(),
  externalId: ExternalId.optional(),
  metadata: Metadata.optional(),
};

export const UsdPaymentCreate = z.object({
  ...paymentCreateCommon,
  deliveryPreference: z.enum(USD_DELIVERY_PREFERENCES as [string, ...string[]]),
  currency: CurrencyCode.optional(),
});
export const FxPaymentCreate = z.object({
  ...paymentCreateCommon,
  deliveryPreference: z.enum(FX_DELIVERY_PREFERENCES),
  currency: CurrencyCode,
  fxQuoteToken: z.string().optional(),
});
export const PaymentCreate = z.union([FxPaymentCreate, UsdPaymentCreate]);
export type PaymentCreate = {
  amount: number;
  originatingAccountId: string;
  receivingAccountId: string;
  deliveryPreference: DeliveryPreference;
  currency?: string;
  fxQuoteToken?: string;
  payerMemo?: string;
  recipientNote?: string;
  compliance?: Compliance;
  attachmentId?: string;
  externalId?: string;
  metadata?: Metadata;
};

/**
 * FX details of a converted payment.
 * ASSUMPTION: an FX payment's response carries `fx: { debitAmount, usdToForeignRate }`, the USD minor
 * units debited before fees and the rate applied; the spec shows no amount fields on the response.
 */
export const PaymentFx = z.object({ debitAmount: z.number().int(), usdToForeignRate: z.number().positive() });

/**
 * Why a payment failed or was canceled, when the service says.
 * ASSUMPTION: a `failed` or `canceled` payment may carry `failureReason: { code, message }` (for an
 * ACH return, the return code such as `R01` and its text); the spec shows no such field, so it is
 * optional and the client works without it.
 */
export const PaymentFailureReason = z.object({ code: z.string(), message: z.string() });
export type PaymentFailureReason = z.infer<typeof PaymentFailureReason>;

export const Payment = z.object({
  id: z.string().startsWith("pay_"),
  status: PaymentStatus,
  deliveryPreference: DeliveryPreference,
  amount: z.number().int(),
  /** ASSUMPTION: the response carries the `currency` the counterparty receives. */
  currency: CurrencyCode,
  originatingAccountId: z.string(),
  receivingAccountId: z.string(),
  payerMemo: z.string().optional(),
  recipientNote: z.string().optional(),
  compliance: Compliance.optional(),
  attachmentId: z.string().optional(),
  fees: z.array(Fee),
  fx: PaymentFx.optional(),
  failureReason: PaymentFailureReason.optional(),
  ...created,
});
export type Payment = z.infer<typeof Payment>;
export const PaymentList = listEnvelope(Payment);

/**
 * Payment update. ASSUMPTION: `status: "canceled"` cancels (only while `scheduled`, else 409
 * `PAYMENT_NOT_CANCELABLE`); the other fields edit (only while `scheduled`, else 409
 * `PAYMENT_NOT_EDITABLE`). `attachmentId` cannot be changed, per the spec.
 */
export const PaymentUpdate = z
  .object({
    status: z.literal("canceled").optional(),
    payerMemo: z.string().max(PAYER_MEMO_MAX).optional(),
    recipientNote: z.string().max(RECIPIENT_NOTE_MAX).optional(),
    metadata: Metadata.optional(),
  })
  .strict();
export type PaymentUpdate = z.infer<typeof PaymentUpdate>;

export interface PaymentListParams extends PageParams {
  status?: PaymentStatus;
  originatingAccountId?: string;
  receivingAccountId?: string;
}

// ---------------------------------------------------------------------------------------------------
// Attachments
// ---------------------------------------------------------------------------------------------------

/**
 * ASSUMPTION: `POST /attachments` takes JSON `{ fileName, contentType, contentBase64 }` (at most
 * 10 MiB decoded) and answers `{ id, fileName, contentType, size, createdAt }`.
 */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
export const AttachmentCreate = z.object({
  fileName: z.string().min(1).max(255),
  contentType: z.string().min(1).max(255),
  contentBase64: z.string().min(1),
});
export type AttachmentCreate = z.infer<typeof AttachmentCreate>;
export const Attachment = z.object({
  id: z.string().startsWith("att_"),
  fileName: z.string(),
  contentType: z.string(),
  size: z.number().int().nonnegative(),
  createdAt: IsoDateTime,
});
export type Attachment = z.infer<typeof Attachment>;

// ---------------------------------------------------------------------------------------------------
// Limitations
// ---------------------------------------------------------------------------------------------------

export const KNOWN_OPERATIONS = [
  "payment.domestic:write",
  "payment.international:write",
  "account.internal:write",
  "account.external:write",
] as const;
export const LimitationReason = z.object({
  code: z.string(),
  message: z.string(),
  missingFields: z.array(z.string()),
  /** ASSUMPTION: the contact address field is `contactEmail`. */
  contactEmail: z.string().optional(),
});
export type LimitationReason = z.infer<typeof LimitationReason>;
/** Unknown `operation` values are kept as strings: the spec says new ones will be added. */
export const Capability = z.object({
  operation: z.string(),
  allowed: z.boolean(),
  reasons: z.array(LimitationReason),
});
export type Capability = z.infer<typeof Capability>;
export const Limitations = z.object({ capabilities: z.array(Capability) });
export type Limitations = z.infer<typeof Limitations>;

/** Which limitable operation a payment to this receiving rail needs. */
export function paymentOperationFor(
  receivingType: AccountType,
): "payment.domestic:write" | "payment.international:write" {
  return receivingType === "international-fx" || receivingType === "international-gusd"
    ? "payment.international:write"
    : "payment.domestic:write";
}

// ---------------------------------------------------------------------------------------------------
// Beneficial owners
// ---------------------------------------------------------------------------------------------------

export const OwnerAddress = z.object({
  line1: z.string().min(1),
  line2: z.string().optional(),
  city: z.string().min(1),
  state: z.string(),
  postalCode: z.string().min(1),
  countryCode: z.string().regex(/^[A-Za-z]{2}$/),
});
export const OwnerType = z.enum(["ubo", "director", "fx-account-holder"]);
export const JobTitle = z.enum([
  "chief-executive-officer",
  "chief-financial-officer",
  "managing-member",
  "general-partner",
  "president",
  "vice-president",
  "treasurer",
]);
export const InternationalIdType = z.enum(["passport", "driver-license", "national-id"]);

export const BeneficialOwnerInput = z.object({
  id: z.number().int().optional(),
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  dateOfBirth: z.string().date(),
  address: OwnerAddress,
  usResident: z.boolean(),
  types: z.array(OwnerType).min(1),
  ownershipPercentage: z.number().min(0).max(1).optional(),
  jobTitle: JobTitle.optional(),
  taxInfo: z.object({ type: z.literal("ssn"), identifier: z.string().min(1) }).optional(),
  internationalIdType: InternationalIdType.optional(),
  internationalId: z.string().optional(),
  /** ASSUMPTION: the front identity document is `frontAttachmentId`. */
  frontAttachmentId: z.string().startsWith("att_").optional(),
  backAttachmentId: z.string().startsWith("att_").optional(),
  email: z.string().optional(),
  phoneNumber: z.string().optional(),
});
export type BeneficialOwnerInput = z.infer<typeof BeneficialOwnerInput>;

export const BeneficialOwner = BeneficialOwnerInput.omit({
  taxInfo: true,
  internationalId: true,
  frontAttachmentId: true,
  backAttachmentId: true,
}).extend({
  id: z.number().int(),
  taxInfo: z.object({ type: z.string(), identifierLast4: z.string() }).optional(),
  internationalId: z.string().optional(),
  hasIdentityDocument: z.boolean(),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type BeneficialOwner = z.infer<typeof BeneficialOwner>;
export const BeneficialOwnerReplace = z.object({ data: z.array(BeneficialOwnerInput) });
export const BeneficialOwnerSet = z.object({ data: z.array(BeneficialOwner) });

// ---------------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------------

export const FxQuoteRequest = z.object({
  receivingAccountId: z.string().startsWith("acct_"),
  amount: z.number().int().positive(),
  currency: CurrencyCode.optional(),
  purpose: z.string().max(255).optional(),
});
export type FxQuoteRequest = z.infer<typeof FxQuoteRequest>;
export const FxQuote = z.object({
  currency: CurrencyCode,
  foreignAmount: z.number().int(),
  amount: z.number().int(),
  usdToForeignRate: z.number().positive(),
  midMarketRate: z.number().positive().optional(),
  quoteToken: z.string(),
  expiresAt: IsoDateTime,
});
export type FxQuote = z.infer<typeof FxQuote>;

/** ASSUMPTION: the fee calculator is `POST /tools/fee-calculator` with this request and response. */
export const FeeCalculatorRequest = z.object({
  amount: z.number().int().positive(),
  currency: CurrencyCode.optional(),
  deliveryPreference: DeliveryPreference,
  originatingAccountId: z.string().startsWith("acct_"),
  receivingAccountId: z.string().startsWith("acct_"),
});
export type FeeCalculatorRequest = z.infer<typeof FeeCalculatorRequest>;
export const FeeCalculatorResult = z.object({ fees: z.array(Fee) });
export type FeeCalculatorResult = z.infer<typeof FeeCalculatorResult>;

/** ASSUMPTION: `POST /tools/fast-payment-eligibility` with this request and response. */
export const FastPaymentEligibilityRequest = z.object({
  amount: z.number().int().positive(),
  deliveryPreference: DeliveryPreference,
  originatingAccountId: z.string().startsWith("acct_"),
  receivingAccountId: z.string().startsWith("acct_"),
});
export type FastPaymentEligibilityRequest = z.infer<typeof FastPaymentEligibilityRequest>;
export const FastPaymentEligibility = z.object({
  eligible: z.boolean(),
  reasons: z.array(z.object({ code: z.string(), message: z.string() })),
});
export type FastPaymentEligibility = z.infer<typeof FastPaymentEligibility>;

/** ASSUMPTION: `POST /tools/delivery-estimate` with this request and response. */
export const DeliveryEstimateRequest = z.object({
  deliveryPreference: DeliveryPreference,
  originatingAccountId: z.string().startsWith("acct_"),
  receivingAccountId: z.string().startsWith("acct_"),
});
export type DeliveryEstimateRequest = z.infer<typeof DeliveryEstimateRequest>;
export const DeliveryEstimate = z.object({
  deliveryPreference: DeliveryPreference,
  estimatedDeliveryDate: z.string().date(),
});
export type DeliveryEstimate = z.infer<typeof DeliveryEstimate>;

/** ASSUMPTION: `POST /accounts/link` takes `{ ownershipType }` and answers `{ url, expiresAt }`. */
export const AccountLinkRequest = z.object({ ownershipType: OwnershipType.default("internal") });
export const AccountLink = z.object({ url: z.string().url(), expiresAt: IsoDateTime });
export type AccountLink = z.infer<typeof AccountLink>;

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
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;

export const WebhookEndpoint = z.object({
  url: z.string(),
  description: z.string().optional(),
  events: z.array(EventType),
  isActive: z.boolean(),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;
export const WebhookEndpointUpdate = z.object({
  url: z.string().url().optional(),
  description: z.string().max(255).optional(),
  events: z.array(EventType).min(1).optional(),
  isActive: z.boolean().optional(),
});
export type WebhookEndpointUpdate = z.infer<typeof WebhookEndpointUpdate>;
/** ASSUMPTION: `GET /webhook/events` answers `{ data: [eventType, ...] }`. */
export const WebhookEventTypes = z.object({ data: z.array(EventType) });

export const WebhookDelivery = z.object({
  event: EventType,
  messageId: z.string().min(1),
  id: z.string(),
  entityId: z.string(),
  occurredAt: IsoDateTime,
  externalId: z.string().optional(),
  entityExternalId: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const HEADERS = {
  apiKey: "api-key",
  entity: "service-entity-id",
  idempotencyKey: "idempotency-key",
  sonarToken: "service-sonar-token",
  signature: "x-service-signature",
  deliveryId: "x-service-delivery-id",
} as const;
