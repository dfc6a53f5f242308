/**
 * The sandbox's payments, stored by columns so that it can hold millions: payment number `slot`
 * (0, 1, 2, … in creation order) is element `slot` of a set of typed arrays. A JS object per payment
 * costs its header and 8 bytes per field, plus its strings, plus a Map entry to find it (~1 KB a
 * payment in all); a row of typed arrays costs ~60 bytes and the garbage collector never walks it.
 *
 * - Enumerations (status, delivery preference, originating account type) are one byte each.
 * - Accounts, entities and currencies are indexes into small tables of the few that exist.
 * - Amounts and times are Float64 (exact for any integer amount and any epoch millisecond).
 * - The slot is the insertion sequence that breaks createdAt ties, so no sequence is stored.
 * - externalId, memo, note and metadata keys and values are ids in one `StringTable`: a repeated
 *   value (a batch id on every row, a note) is kept once, and a row key equal to the externalId is
 *   the same id.
 * - Metadata is a "shape" (its list of keys, interned) and the value ids in one shared pool.
 * - Compliance, attachment and FX details are columns too (a compliance purpose and an attachment id
 *   are string ids, the FX debit and rate two Float64s): a bench sheet has them on two rows in three,
 *   and as a JS object each cost ~150-200 B of heap the garbage collector walks on every major GC
 *   (~170 MB at 1M payments). Only the creation values of fields a PATCH edited, which few payments
 *   have, are in a side Map by slot.
 * - The id is computed from the slot (payment-ids.ts), so no id string and no Map by id are kept.
 *
 * `StoredPayment` is a short-lived handle on one slot: what the rest of the sandbox passes around
 * and reads fields from; handles are made on demand and never stored per payment.
 *
 * The response form (`toPayment`) is rendered when asked for; fees follow from the status (recorded
 * when the payment went `in-progress`, which every completed or failed payment did, and a canceled
 * one never did). `createdView` renders the response the create answered (201), which an idempotent
 * replay sends again: status `scheduled`, no fees, `updatedAt` = `createdAt`, and the memo, note and
 * metadata as created. Those three can change by PATCH while scheduled; the first edit keeps their
 * creation values (`PaymentTable.asCreated`), so a replay never shows a later state.
 */

import type { Listable } from "./pagination.js";
import { PaymentIds } from "./payment-ids.js";
import { feesFor, outcomeForAmount, type PaymentOutcome } from "./rules.js";
import { grown, SlotList, SmallTable, StringTable } from "./string-table.js";
import {
  type Account,
  AccountType,
  DeliveryPreference,
  type Payment,
  type PaymentCreate,
  type PaymentFailureReason,
  PaymentStatus,
} from "./wire.js";

type Compliance = NonNullable<Payment["compliance"]>;
type PaymentFx = NonNullable<Payment["fx"]>;

/** What PATCH can change while a payment is scheduled. */
interface Editable {
  payerMemo: string | undefined;
  recipientNote: string | undefined;
  metadata: Record<string, string> | undefined;
}

export interface NewStoredPayment {
  createdMs: number;
  entityId: string;
  body: PaymentCreate;
  currency: string;
  originatingAccountId: string;
  receivingAccountId: string;
  /** Set for a conversion; its `debitAmount` is the USD debit (otherwise the debit is `body.amount`). */
  fx: PaymentFx | undefined;
  originatingType: Account["type"];
}

const STATUSES = PaymentStatus.options;
const PREFERENCES = DeliveryPreference.options;
const ACCOUNT_TYPES = AccountType.options;
const STATUS_CODE = new Map(STATUSES.map((s, i) => [s, i]));
const PREFERENCE_CODE = new Map(PREFERENCES.map((p, i) => [p, i]));
const ACCOUNT_TYPE_CODE = new Map(ACCOUNT_TYPES.map((t, i) => [t, i]));

export const statusCode = (status: PaymentStatus): number => STATUS_CODE.get(status) as number;
export const statusOf = (code: number): PaymentStatus => STATUSES[code] as PaymentStatus;

/** Statuses a payment only reaches through `in-progress`, where its fees were recorded. */
const HAS_FEES: ReadonlySet<PaymentStatus> = new Set(["in-progress", "completed", "failed"]);

const NONE = -1;
const iso = (ms: number) => new Date(ms).toISOString();

/** The columns. Fields are public to the store (payment-store.ts) and the handle; nothing else. */
export class PaymentTable {
  capacity = 1024;
  length = 0;
  status = new Uint8Array(this.capacity);
  preference = new Uint8Array(this.capacity);
  originatingType = new Uint8Array(this.capacity);
  currency = new Uint16Array(this.capacity);
  entity = new Uint32Array(this.capacity);
  originating = new Uint32Array(this.capacity);
  receiving = new Uint32Array(this.capacity);
  amount = new Float64Array(this.capacity);
  created = new Float64Array(this.capacity);
  updated = new Float64Array(this.capacity);
  /** String ids, NONE when absent. */
  externalId = new Int32Array(this.capacity).fill(NONE);
  payerMemo = new Int32Array(this.capacity).fill(NONE);
  recipientNote = new Int32Array(this.capacity).fill(NONE);
  /** Metadata shape id (NONE: no metadata) and where its values start in `metaValues`. */
  metaShape = new Int32Array(this.capacity).fill(NONE);
  metaAt = new Uint32Array(this.capacity);
  /** Compliance: its type's id in `complianceTypes` + 1 (0: none) and its purpose's string id. */
  complianceType = new Uint8Array(this.capacity);
  compliancePurpose = new Int32Array(this.capacity).fill(NONE);
  attachmentId = new Int32Array(this.capacity).fill(NONE);
  /** A conversion's USD debit (NaN: not a conversion) and the rate applied. */
  fxDebit = new Float64Array(this.capacity).fill(Number.NaN);
  fxRate = new Float64Array(this.capacity);

  readonly strings = new StringTable();
  readonly accounts = new SmallTable<string>();
  readonly entities = new SmallTable<string>();
  readonly currencies = new SmallTable<string>();
  readonly complianceTypes = new SmallTable<Compliance["type"]>();
  readonly ids = new PaymentIds();
  /** Value string ids of every payment's metadata, back to back (an edit appends a new run). */
  readonly metaValues = new SlotList(1024);
  /** Shape id → its key string ids in order; and the shapes by their key ids joined. */
  readonly shapes: number[][] = [];
  private readonly shapeIds = new Map<string, number>();
  /** The editable fields as created, by slot, once a PATCH has changed one of them. */
  readonly asCreated = new Map<number, Editable>();
  /** Why a payment was returned, by slot (few payments have one). */
  readonly failureReasons = new Map<number, PaymentFailureReason>();

  /** Appends a payment in status `scheduled`; returns its slot. */
  append(p: NewStoredPayment): number {
    if (this.length === this.capacity) this.grow();
    const slot = this.length++;
    const body = p.body;
    this.status[slot] = statusCode("scheduled");
    this.preference[slot] = PREFERENCE_CODE.get(body.deliveryPreference) as number;
    this.originatingType[slot] = ACCOUNT_TYPE_CODE.get(p.originatingType) as number;
    this.currency[slot] = this.currencies.intern(p.currency);
    this.entity[slot] = this.entities.intern(p.entityId);
    this.originating[slot] = this.accounts.intern(p.originatingAccountId);
    this.receiving[slot] = this.accounts.intern(p.receivingAccountId);
    this.amount[slot] = body.amount;
    this.created[slot] = p.createdMs;
    this.updated[slot] = p.createdMs;
    this.externalId[slot] = this.stringId(body.externalId);
    this.payerMemo[slot] = this.stringId(body.payerMemo);
    this.recipientNote[slot] = this.stringId(body.recipientNote);
    this.writeMetadata(slot, body.metadata);
    const { compliance, attachmentId } = body;
    if (compliance) {
      this.complianceType[slot] = this.complianceTypes.intern(compliance.type) + 1;
      this.compliancePurpose[slot] = this.strings.intern(compliance.purpose);
    }
    this.attachmentId[slot] = this.stringId(attachmentId);
    if (p.fx) {
      this.fxDebit[slot] = p.fx.debitAmount;
      this.fxRate[slot] = p.fx.usdToForeignRate;
    }
    return slot;
  }

  stringId(s: string | undefined): number {
    return s === undefined ? NONE : this.strings.intern(s);
  }

  string(id: number): string | undefined {
    return id === NONE ? undefined : this.strings.get(id);
  }

  /** Sets a payment's metadata (a new run of values; the old run stays behind, unreferenced). */
  writeMetadata(slot: number, metadata: Record<string, string> | undefined): void {
    if (metadata === undefined) {
      this.metaShape[slot] = NONE;
      return;
    }
    const keys = Object.keys(metadata);
    const keyIds = keys.map((k) => this.strings.intern(k));
    const shapeKey = keyIds.join(",");
    let shape = this.shapeIds.get(shapeKey);
    if (shape === undefined) {
      shape = this.shapes.length;
      this.shapes.push(keyIds);
      this.shapeIds.set(shapeKey, shape);
    }
    this.metaShape[slot] = shape;
    this.metaAt[slot] = this.metaValues.length;
    for (const k of keys) this.metaValues.push(this.strings.intern(metadata[k] as string));
  }

  /** The (key id, value id) pairs of a payment's metadata, in key order. */
  metadataPairs(slot: number): [number, number][] {
    const shape = this.metaShape[slot] as number;
    if (shape === NONE) return [];
    const keys = this.shapes[shape] as number[];
    const at = this.metaAt[slot] as number;
    return keys.map((k, i) => [k, this.metaValues.at(at + i)]);
  }

  /** The metadata object as stored (a new object each time), or undefined. */
  metadata(slot: number): Record<string, string> | undefined {
    if (this.metaShape[slot] === NONE) return undefined;
    // fromEntries defines own properties, so even a "__proto__" key comes back as sent.
    return Object.fromEntries(
      this.metadataPairs(slot).map(([k, v]) => [this.strings.get(k), this.strings.get(v)]),
    );
  }

  /** The value of metadata key `keyId` for this payment, or NONE. */
  metadataValue(slot: number, keyId: number): number {
    const shape = this.metaShape[slot] as number;
    if (shape === NONE) return NONE;
    const i = (this.shapes[shape] as number[]).indexOf(keyId);
    return i < 0 ? NONE : this.metaValues.at((this.metaAt[slot] as number) + i);
  }

  private grow(): void {
    const n = this.capacity * 2;
    this.status = grown(this.status, n);
    this.preference = grown(this.preference, n);
    this.originatingType = grown(this.originatingType, n);
    this.currency = grown(this.currency, n);
    this.entity = grown(this.entity, n);
    this.originating = grown(this.originating, n);
    this.receiving = grown(this.receiving, n);
    this.amount = grown(this.amount, n);
    this.created = grown(this.created, n);
    this.updated = grown(this.updated, n);
    this.externalId = grown(this.externalId, n, NONE);
    this.payerMemo = grown(this.payerMemo, n, NONE);
    this.recipientNote = grown(this.recipientNote, n, NONE);
    this.metaShape = grown(this.metaShape, n, NONE);
    this.metaAt = grown(this.metaAt, n);
    this.complianceType = grown(this.complianceType, n);
    this.compliancePurpose = grown(this.compliancePurpose, n, NONE);
    this.attachmentId = grown(this.attachmentId, n, NONE);
    this.fxDebit = grown(this.fxDebit, n, Number.NaN);
    this.fxRate = grown(this.fxRate, n);
    this.capacity = n;
  }
}

/** A handle on one stored payment: reads (and the few writes PATCH makes) go to the columns. */
export class StoredPayment implements Listable {
  constructor(
    private readonly t: PaymentTable,
    readonly slot: number,
  ) {}

  get id(): string {
    return this.t.ids.encode(this.slot);
  }

  /**
   * The insertion sequence that breaks createdAt ties (pagination.ts): payments are only ever
   * ordered among themselves, and their slots are given out in creation order.
   */
  get seq(): number {
    return this.slot;
  }

  get createdMs(): number {
    return this.t.created[this.slot] as number;
  }

  get updatedMs(): number {
    return this.t.updated[this.slot] as number;
  }

  set updatedMs(ms: number) {
    this.t.updated[this.slot] = ms;
  }

  get entityId(): string {
    return this.t.entities.get(this.t.entity[this.slot] as number);
  }

  get externalId(): string | undefined {
    return this.t.string(this.t.externalId[this.slot] as number);
  }

  get metadata(): Record<string, string> | undefined {
    return this.t.metadata(this.slot);
  }

  get status(): PaymentStatus {
    return statusOf(this.t.status[this.slot] as number);
  }

  get deliveryPreference(): DeliveryPreference {
    return PREFERENCES[this.t.preference[this.slot] as number] as DeliveryPreference;
  }

  get amount(): number {
    return this.t.amount[this.slot] as number;
  }

  get currency(): string {
    return this.t.currencies.get(this.t.currency[this.slot] as number);
  }

  get originatingAccountId(): string {
    return this.t.accounts.get(this.t.originating[this.slot] as number);
  }

  get receivingAccountId(): string {
    return this.t.accounts.get(this.t.receiving[this.slot] as number);
  }

  get payerMemo(): string | undefined {
    return this.t.string(this.t.payerMemo[this.slot] as number);
  }

  set payerMemo(memo: string | undefined) {
    this.t.payerMemo[this.slot] = this.t.stringId(memo);
  }

  get recipientNote(): string | undefined {
    return this.t.string(this.t.recipientNote[this.slot] as number);
  }

  set recipientNote(note: string | undefined) {
    this.t.recipientNote[this.slot] = this.t.stringId(note);
  }

  /** USD minor units debited before fees: the converted debit for an fx payment, else the amount. */
  get usdAmount(): number {
    const debit = this.t.fxDebit[this.slot] as number;
    return Number.isNaN(debit) ? this.amount : debit;
  }

  get compliance(): Compliance | undefined {
    const type = this.t.complianceType[this.slot] as number;
    if (type === 0) return undefined;
    return {
      type: this.t.complianceTypes.get(type - 1),
      purpose: this.t.string(this.t.compliancePurpose[this.slot] as number) as string,
    };
  }

  get attachmentId(): string | undefined {
    return this.t.string(this.t.attachmentId[this.slot] as number);
  }

  get fx(): PaymentFx | undefined {
    const debitAmount = this.t.fxDebit[this.slot] as number;
    if (Number.isNaN(debitAmount)) return undefined;
    return { debitAmount, usdToForeignRate: this.t.fxRate[this.slot] as number };
  }

  /** Why the payment failed or was canceled, when the sandbox says (a return). */
  get failureReason(): PaymentFailureReason | undefined {
    return this.t.failureReasons.get(this.slot);
  }

  set failureReason(reason: PaymentFailureReason | undefined) {
    if (reason === undefined) this.t.failureReasons.delete(this.slot);
    else this.t.failureReasons.set(this.slot, reason);
  }

  /** How the payment ends, from its amount's trigger digits (rules.ts). */
  get outcome(): PaymentOutcome {
    return outcomeForAmount(this.amount);
  }

  get originatingType(): Account["type"] {
    return ACCOUNT_TYPES[this.t.originatingType[this.slot] as number] as Account["type"];
  }

  /** Keeps the creation values of the editable fields before the first edit. */
  beforeEdit(): void {
    if (this.t.asCreated.has(this.slot)) return;
    this.t.asCreated.set(this.slot, {
      payerMemo: this.payerMemo,
      recipientNote: this.recipientNote,
      metadata: this.metadata,
    });
  }

  /** The payment as `GET /payments/{id}` answers it now. */
  toPayment(): Payment {
    return this.render(this.status, this, this.updatedMs);
  }

  /** The payment as its create answered it (201), for an idempotent replay. */
  createdView(): Payment {
    return this.render("scheduled", this.t.asCreated.get(this.slot) ?? this, this.createdMs);
  }

  /** The response form, keys in the order the service sends them. */
  private render(status: PaymentStatus, editable: Editable, updatedMs: number): Payment {
    const { payerMemo, recipientNote, metadata } = editable;
    const { compliance, attachmentId, fx } = this;
    const failureReason = status === "failed" || status === "canceled" ? this.failureReason : undefined;
    const createdMs = this.createdMs;
    const createdAt = iso(createdMs);
    const externalId = this.externalId;
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
      ...(fx ? { fx } : {}),
      ...(failureReason ? { failureReason } : {}),
      ...(externalId !== undefined ? { externalId } : {}),
      ...(metadata ? { metadata } : {}),
      createdAt,
      updatedAt: updatedMs === createdMs ? createdAt : iso(updatedMs),
    };
  }
}
