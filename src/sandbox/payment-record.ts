/**
 * One stored payment, kept compact so the sandbox can hold millions: one object with a fixed shape
 * per payment (no response object, no ISO strings, no fee list), the strings shared with the
 * request, the accounts and the indexes. The response form (`toPayment`) is rendered when asked for;
 * fees follow from the status (recorded when the payment went `in-progress`, which every completed or
 * failed payment did, and a canceled one never did).
 *
 * `createdView` renders the response the create answered (201), which an idempotent replay sends
 * again: status `scheduled`, no fees, `updatedAt` = `createdAt`, and the memo, note and metadata as
 * created. Those three can change by PATCH while scheduled; the first edit keeps their creation
 * values (`asCreated`), so a replay never shows a later state.
 */
import type {
  Account,
  DeliveryPreference,
  Payment,
  PaymentCreate,
  PaymentStatus,
} from "../payouts-api/wire-types.js";
import type { Listable } from "./pagination.js";
import { feesFor, type PaymentOutcome } from "./rules.js";

type Compliance = NonNullable<Payment["compliance"]>;
type PaymentFx = NonNullable<Payment["fx"]>;

/** What PATCH can change while a payment is scheduled. */
interface Editable {
  payerMemo: string | undefined;
  recipientNote: string | undefined;
  metadata: Record<string, string> | undefined;
}

export interface NewStoredPayment {
  id: string;
  seq: number;
  createdMs: number;
  entityId: string;
  body: PaymentCreate;
  currency: string;
  originatingAccountId: string;
  receivingAccountId: string;
  fx: PaymentFx | undefined;
  usdAmount: number;
  outcome: PaymentOutcome;
  originatingType: Account["type"];
}

/** Statuses a payment only reaches through `in-progress`, where its fees were recorded. */
const HAS_FEES: ReadonlySet<PaymentStatus> = new Set(["in-progress", "completed", "failed"]);

const iso = (ms: number) => new Date(ms).toISOString();

export class StoredPayment implements Listable {
  readonly id: string;
  readonly seq: number;
  readonly createdMs: number;
  updatedMs: number;
  readonly entityId: string;
  readonly externalId: string | undefined;
  metadata: Record<string, string> | undefined;
  status: PaymentStatus = "scheduled";
  readonly deliveryPreference: DeliveryPreference;
  readonly amount: number;
  readonly currency: string;
  readonly originatingAccountId: string;
  readonly receivingAccountId: string;
  payerMemo: string | undefined;
  recipientNote: string | undefined;
  readonly compliance: Compliance | undefined;
  readonly attachmentId: string | undefined;
  readonly fx: PaymentFx | undefined;
  /** USD minor units debited before fees. */
  readonly usdAmount: number;
  readonly outcome: PaymentOutcome;
  readonly originatingType: Account["type"];
  /** The editable fields as created, once a PATCH has changed one of them. */
  asCreated: Editable | undefined = undefined;

  constructor(p: NewStoredPayment) {
    this.id = p.id;
    this.seq = p.seq;
    this.createdMs = p.createdMs;
    this.updatedMs = p.createdMs;
    this.entityId = p.entityId;
    this.externalId = p.body.externalId;
    this.metadata = p.body.metadata;
    this.deliveryPreference = p.body.deliveryPreference;
    this.amount = p.body.amount;
    this.currency = p.currency;
    this.originatingAccountId = p.originatingAccountId;
    this.receivingAccountId = p.receivingAccountId;
    this.payerMemo = p.body.payerMemo;
    this.recipientNote = p.body.recipientNote;
    this.compliance = p.body.compliance;
    this.attachmentId = p.body.attachmentId;
    this.fx = p.fx;
    this.usdAmount = p.usdAmount;
    this.outcome = p.outcome;
    this.originatingType = p.originatingType;
  }

  /** Keeps the creation values of the editable fields before the first edit. */
  beforeEdit(): void {
    this.asCreated ??= {
      payerMemo: this.payerMemo,
      recipientNote: this.recipientNote,
      metadata: this.metadata,
    };
  }

  /** The payment as `GET /payments/{id}` answers it now. */
  toPayment(): Payment {
    return this.render(this.status, this, this.updatedMs);
  }

  /** The payment as its create answered it (201), for an idempotent replay. */
  createdView(): Payment {
    return this.render("scheduled", this.asCreated ?? this, this.createdMs);
  }

  /** The response form, keys in the order the service sends them. */
  private render(status: PaymentStatus, editable: Editable, updatedMs: number): Payment {
    const { payerMemo, recipientNote, metadata } = editable;
    const createdAt = iso(this.createdMs);
    return {
      id: this.id,
      status,
      deliveryPreference: this.deliveryPreference,
      amount: this.amount,
      currency: this.currency,
      originatingAccountId: this.originatingAccountId,
      receivingAccountId: this.receivingAccountId,
      ...(payerMemo !== undefined ? { payerMemo } : {}),
      ...(recipientNote !== undefined ? { recipientNote } : {}),
      ...(this.compliance ? { compliance: this.compliance } : {}),
      ...(this.attachmentId ? { attachmentId: this.attachmentId } : {}),
      fees: HAS_FEES.has(status) ? feesFor(this) : [],
      ...(this.fx ? { fx: { ...this.fx } } : {}),
      ...(this.externalId !== undefined ? { externalId: this.externalId } : {}),
      ...(metadata ? { metadata } : {}),
      createdAt,
      updatedAt: updatedMs === this.createdMs ? createdAt : iso(updatedMs),
    };
  }
}
