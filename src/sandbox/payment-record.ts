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
 * values (`Rare.asCreated`), so a replay never shows a later state.
 */
import {
  type Account,
  DeliveryPreference,
  type Payment,
  type PaymentCreate,
  type PaymentStatus,
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

/** What few payments have, kept out of line so the others pay one empty field for all of it. */
interface Rare {
  compliance: Compliance | undefined;
  attachmentId: string | undefined;
  fx: PaymentFx | undefined;
  /** The editable fields as created, once a PATCH has changed one of them. */
  asCreated: Editable | undefined;
}

/**
 * Times are kept as milliseconds after the first payment's creation: small integers, which V8 keeps
 * in the field itself, where an epoch millisecond would be a separate heap number per field.
 */
let timeBase: number | undefined;
function toStored(ms: number): number {
  timeBase ??= ms;
  return ms - timeBase;
}
const fromStored = (stored: number): number => stored + (timeBase as number);

/** The one copy of each delivery preference, instead of the request's own string per payment. */
const PREFERENCES = new Map(DeliveryPreference.options.map((p) => [p, p]));
const sharedPreference = (p: DeliveryPreference): DeliveryPreference => PREFERENCES.get(p) ?? p;

/** Statuses a payment only reaches through `in-progress`, where its fees were recorded. */
const HAS_FEES: ReadonlySet<PaymentStatus> = new Set(["in-progress", "completed", "failed"]);

const iso = (ms: number) => new Date(ms).toISOString();

export class StoredPayment implements Listable {
  readonly id: string;
  readonly seq: number;
  private readonly created: number;
  private updated: number;
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
  /** USD minor units debited before fees. */
  readonly usdAmount: number;
  readonly outcome: PaymentOutcome;
  readonly originatingType: Account["type"];
  private rare: Rare | undefined;

  constructor(p: NewStoredPayment) {
    this.id = p.id;
    this.seq = p.seq;
    this.created = toStored(p.createdMs);
    this.updated = this.created;
    this.entityId = p.entityId;
    this.externalId = p.body.externalId;
    this.metadata = p.body.metadata;
    this.deliveryPreference = sharedPreference(p.body.deliveryPreference);
    this.amount = p.body.amount;
    this.currency = p.currency;
    this.originatingAccountId = p.originatingAccountId;
    this.receivingAccountId = p.receivingAccountId;
    this.payerMemo = p.body.payerMemo;
    this.recipientNote = p.body.recipientNote;
    this.usdAmount = p.usdAmount;
    this.outcome = p.outcome;
    this.originatingType = p.originatingType;
    const { compliance, attachmentId } = p.body;
    if (compliance || attachmentId || p.fx) {
      this.rare = { compliance, attachmentId, fx: p.fx, asCreated: undefined };
    }
  }

  get createdMs(): number {
    return fromStored(this.created);
  }

  get updatedMs(): number {
    return fromStored(this.updated);
  }

  set updatedMs(ms: number) {
    this.updated = toStored(ms);
  }

  /** Keeps the creation values of the editable fields before the first edit. */
  beforeEdit(): void {
    this.rare ??= { compliance: undefined, attachmentId: undefined, fx: undefined, asCreated: undefined };
    this.rare.asCreated ??= {
      payerMemo: this.payerMemo,
      recipientNote: this.recipientNote,
      metadata: this.metadata,
    };
  }

  /** The payment as `GET /payments/{id}` answers it now. */
  toPayment(): Payment {
    return this.render(this.status, this, this.updated);
  }

  /** The payment as its create answered it (201), for an idempotent replay. */
  createdView(): Payment {
    return this.render("scheduled", this.rare?.asCreated ?? this, this.created);
  }

  /** The response form, keys in the order the service sends them. */
  private render(status: PaymentStatus, editable: Editable, updated: number): Payment {
    const { payerMemo, recipientNote, metadata } = editable;
    const { compliance, attachmentId, fx } = this.rare ?? NO_RARE;
    const createdAt = iso(fromStored(this.created));
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
      ...(compliance ? { compliance } : {}),
      ...(attachmentId ? { attachmentId } : {}),
      fees: HAS_FEES.has(status) ? feesFor(this) : [],
      ...(fx ? { fx: { ...fx } } : {}),
      ...(this.externalId !== undefined ? { externalId: this.externalId } : {}),
      ...(metadata ? { metadata } : {}),
      createdAt,
      updatedAt: updated === this.created ? createdAt : iso(fromStored(updated)),
    };
  }
}

const NO_RARE: Rare = { compliance: undefined, attachmentId: undefined, fx: undefined, asCreated: undefined };
