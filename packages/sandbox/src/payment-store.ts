/**
 * The sandbox's payments and their indexes, so that it can hold millions of them and every operation
 * stays O(1) or O(log n) in what it stores (plus what a list call skips because a second filter
 * refuses it). Payments are rows of the columns in payment-record.ts, named by slot; every index
 * holds slots (4 bytes) in typed arrays, never an object per payment.
 *
 * Every list index is a `SlotList` sorted oldest first by (createdMs, seq), the list order reversed.
 * A new payment is appended (its clock only moves forward; if it ever goes back, a binary search
 * places the payment). Metadata changes only by PATCH while scheduled, so removing from those lists
 * is rare. Statuses change all the time: a payment leaving a status stays in that status's list
 * (readers check the status anyway) until stale entries outnumber live ones and the list is
 * compacted, O(1) amortised. A payment never enters the same status twice.
 */

import type { ListQuery } from "./pagination.js";
import {
  type NewStoredPayment,
  PaymentTable,
  StoredPayment,
  statusCode,
  statusOf,
} from "./payment-record.js";
import { grown, SlotList } from "./string-table.js";
import type { PaymentStatus } from "./wire.js";

const NONE = -1;
const EMPTY = new SlotList(0);

/**
 * Metadata (key id, value id) → the payments with that pair, in an open-addressing table of three
 * Int32Arrays. Most pairs (a row key) belong to one payment, whose slot is kept in the table itself;
 * a pair shared by several payments (a batch id) points to a `SlotList`.
 */
class PairIndex {
  private keys = new Int32Array(1 << 12).fill(NONE);
  private values = new Int32Array(1 << 12);
  /** >= 0: the one slot; NONE: no payment (any more); <= -2: list number -head - 2. */
  private heads = new Int32Array(1 << 12);
  private used = 0;
  private readonly lists: SlotList[] = [];

  constructor(private readonly insert: (list: SlotList, slot: number) => void) {}

  add(key: number, value: number, slot: number): void {
    const i = this.position(key, value);
    if (this.keys[i] === NONE) {
      this.keys[i] = key;
      this.values[i] = value;
      this.heads[i] = slot;
      if (++this.used * 2 > this.keys.length) this.rehash();
      return;
    }
    const head = this.heads[i] as number;
    if (head === NONE) this.heads[i] = slot;
    else if (head >= 0) {
      const list = SlotList.of(head);
      this.insert(list, slot);
      this.lists.push(list);
      this.heads[i] = -(this.lists.length - 1) - 2;
    } else this.insert(this.lists[-head - 2] as SlotList, slot);
  }

  remove(key: number, value: number, slot: number, removeFrom: (list: SlotList, slot: number) => void): void {
    const i = this.position(key, value);
    if (this.keys[i] === NONE) return;
    const head = this.heads[i] as number;
    if (head === slot) this.heads[i] = NONE;
    else if (head <= -2) removeFrom(this.lists[-head - 2] as SlotList, slot);
  }

  list(key: number, value: number): SlotList {
    if (key === NONE || value === NONE) return EMPTY;
    const i = this.position(key, value);
    const head = this.keys[i] === NONE ? NONE : (this.heads[i] as number);
    if (head === NONE) return EMPTY;
    return head >= 0 ? SlotList.of(head) : (this.lists[-head - 2] as SlotList);
  }

  /** Where the pair is, or the empty place it would go. */
  private position(key: number, value: number): number {
    const mask = this.keys.length - 1;
    let i = pairHash(key, value) & mask;
    while (this.keys[i] !== NONE && (this.keys[i] !== key || this.values[i] !== value)) i = (i + 1) & mask;
    return i;
  }

  private rehash(): void {
    const { keys, values, heads } = this;
    const n = keys.length * 2;
    this.keys = new Int32Array(n).fill(NONE);
    this.values = new Int32Array(n);
    this.heads = new Int32Array(n);
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j] as number;
      if (key === NONE) continue;
      const i = this.position(key, values[j] as number);
      this.keys[i] = key;
      this.values[i] = values[j] as number;
      this.heads[i] = heads[j] as number;
    }
  }
}

function pairHash(key: number, value: number): number {
  let h = Math.imul(key, 0x9e3779b1) ^ Math.imul(value, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 13)) >>> 0;
}

/** Statuses after which a payment no longer counts as "paid before" (`hasBeenPaid`). */
const UNPAID: readonly PaymentStatus[] = ["failed", "canceled"];
const OPEN: readonly PaymentStatus[] = ["scheduled", "in-progress"];

export interface PaymentListFilters {
  entityId: string;
  status?: PaymentStatus;
  originatingAccountId?: string;
  receivingAccountId?: string;
}

export class PaymentStore {
  private readonly t = new PaymentTable();
  /** String id of an externalId → its payment's slot (NONE for strings that are not one). */
  private slotOfExternalId = new Int32Array(1024).fill(NONE);
  private readonly byEntity = new Map<string, SlotList>();
  private readonly byMetadata = new PairIndex((list, slot) => this.insertSorted(list, slot));
  private readonly byStatus = new Map<PaymentStatus, { list: SlotList; live: number }>();
  private readonly byOriginating = new Map<string, SlotList>();
  private readonly byReceiving = new Map<string, SlotList>();
  /** Payments not failed or canceled, per receiving account. */
  private readonly paidCount = new Map<string, number>();
  /** Scheduled or in-progress payments' slots per account (either side), oldest first (Set order). */
  private readonly open = new Map<string, Set<number>>();

  get size(): number {
    return this.t.length;
  }

  get(id: string): StoredPayment | undefined {
    const slot = this.t.ids.decode(id);
    return slot >= 0 && slot < this.t.length ? this.at(slot) : undefined;
  }

  /** Every payment, oldest first. */
  *values(): IterableIterator<StoredPayment> {
    for (let slot = 0; slot < this.t.length; slot++) yield this.at(slot);
  }

  /** How many payments are in each status. */
  countByStatus(): Record<PaymentStatus, number> {
    const count = (s: PaymentStatus) => this.byStatus.get(s)?.live ?? 0;
    return {
      scheduled: count("scheduled"),
      "in-progress": count("in-progress"),
      completed: count("completed"),
      failed: count("failed"),
      canceled: count("canceled"),
    };
  }

  findByExternalId(externalId: string): StoredPayment | undefined {
    const slot = this.externalIdSlot(externalId);
    return slot === NONE ? undefined : this.at(slot);
  }

  /** Stores a new payment (status `scheduled`) and returns it. */
  add(p: NewStoredPayment): StoredPayment {
    const slot = this.t.append(p);
    const stored = this.at(slot);
    const ext = this.t.externalId[slot] as number;
    if (ext !== NONE) {
      if (ext >= this.slotOfExternalId.length) {
        this.slotOfExternalId = grown(
          this.slotOfExternalId,
          Math.max(ext + 1, this.slotOfExternalId.length * 2),
          NONE,
        );
      }
      this.slotOfExternalId[ext] = slot;
    }
    this.addTo(this.byEntity, p.entityId, slot);
    this.enterStatus(slot, "scheduled");
    this.addTo(this.byOriginating, p.originatingAccountId, slot);
    this.addTo(this.byReceiving, p.receivingAccountId, slot);
    for (const [k, v] of this.t.metadataPairs(slot)) this.byMetadata.add(k, v, slot);
    this.bumpPaid(p.receivingAccountId, 1);
    this.openOf(p.originatingAccountId).add(slot);
    this.openOf(p.receivingAccountId).add(slot);
    return stored;
  }

  /** Moves a payment to `to`, keeping the indexes true. */
  setStatus(stored: StoredPayment, to: PaymentStatus): void {
    const slot = stored.slot;
    const from = statusOf(this.t.status[slot] as number);
    if (from === to) return;
    this.leaveStatus(from);
    this.t.status[slot] = statusCode(to);
    this.enterStatus(slot, to);
    if (!UNPAID.includes(from) && UNPAID.includes(to)) this.bumpPaid(stored.receivingAccountId, -1);
    if (OPEN.includes(from) && !OPEN.includes(to)) {
      for (const account of [stored.originatingAccountId, stored.receivingAccountId]) {
        const set = this.open.get(account);
        set?.delete(slot);
        if (set?.size === 0) this.open.delete(account);
      }
    }
  }

  /** Replaces a payment's metadata, keeping the metadata index true. */
  setMetadata(stored: StoredPayment, metadata: Record<string, string>): void {
    const slot = stored.slot;
    const before = this.t.metadataPairs(slot);
    this.t.writeMetadata(slot, metadata);
    const after = this.t.metadataPairs(slot);
    const has = (pairs: [number, number][], [k, v]: [number, number]) =>
      pairs.some(([k2, v2]) => k2 === k && v2 === v);
    for (const pair of before) {
      if (!has(after, pair))
        this.byMetadata.remove(pair[0], pair[1], slot, (l, s) => this.removeSorted(l, s));
    }
    for (const pair of after) if (!has(before, pair)) this.byMetadata.add(pair[0], pair[1], slot);
  }

  /** Whether the payee has a payment that is not failed or canceled ("paid before"). */
  hasBeenPaid(receivingAccountId: string): boolean {
    return (this.paidCount.get(receivingAccountId) ?? 0) > 0;
  }

  /** The oldest scheduled or in-progress payment using the account on either side. */
  oldestOpenPaymentOf(accountId: string): StoredPayment | undefined {
    const set = this.open.get(accountId);
    const slot = set?.values().next().value;
    return slot === undefined ? undefined : this.at(slot);
  }

  /**
   * One page newest first, as `paginate` defines it over the filtered payments. `cursor` is the
   * stored payment a `startingAfter`/`endingBefore` id names (already checked to exist). Walks the
   * smallest index that every match must be in, from the cursor or time bound on.
   */
  page(
    q: ListQuery,
    filters: PaymentListFilters,
    cursor: StoredPayment | undefined,
  ): { data: StoredPayment[]; hasMore: boolean } {
    const list = this.smallestCandidateList(q, filters);
    const matches = this.matcher(q, filters);
    // [lo, hi): the part of `list` inside the created[gte]/created[lte] bounds.
    let lo = q.createdGte === undefined ? 0 : this.boundByTime(list, q.createdGte, false);
    let hi = q.createdLte === undefined ? list.length : this.boundByTime(list, q.createdLte, true);
    const found: number[] = [];
    if (cursor && q.endingBefore !== undefined) {
      // The `limit` matches just newer than the cursor, found oldest first, returned newest first.
      const after = this.lowerBound(list, cursor.slot);
      lo = Math.max(lo, after < list.length && list.at(after) === cursor.slot ? after + 1 : after);
      for (let i = lo; i < hi && found.length <= q.limit; i++) {
        if (matches(list.at(i))) found.push(list.at(i));
      }
      const hasMore = found.length > q.limit;
      return {
        data: found
          .slice(0, q.limit)
          .reverse()
          .map((s) => this.at(s)),
        hasMore,
      };
    }
    if (cursor) hi = Math.min(hi, this.lowerBound(list, cursor.slot));
    for (let i = hi - 1; i >= lo && found.length <= q.limit; i--) {
      if (matches(list.at(i))) found.push(list.at(i));
    }
    const hasMore = found.length > q.limit;
    return { data: found.slice(0, q.limit).map((s) => this.at(s)), hasMore };
  }

  /** A handle on the payment in `slot` (a slot this store gave out). */
  at(slot: number): StoredPayment {
    return new StoredPayment(this.t, slot);
  }

  private externalIdSlot(externalId: string): number {
    const id = this.t.strings.find(externalId);
    return id === NONE || id >= this.slotOfExternalId.length ? NONE : (this.slotOfExternalId[id] as number);
  }

  /**
   * The list filters compiled to integer comparisons on the columns. A value never stored (an
   * unknown account, metadata value or entity) matches nothing.
   */
  private matcher(q: ListQuery, filters: PaymentListFilters): (slot: number) => boolean {
    const t = this.t;
    const strings = t.strings;
    const entity = t.entities.find(filters.entityId);
    const ext = q.externalId === undefined ? undefined : strings.find(q.externalId);
    const status = filters.status === undefined ? undefined : statusCode(filters.status);
    const originating =
      filters.originatingAccountId === undefined ? undefined : t.accounts.find(filters.originatingAccountId);
    const receiving =
      filters.receivingAccountId === undefined ? undefined : t.accounts.find(filters.receivingAccountId);
    const pairs = q.metadata.map(([k, v]) => [strings.find(k), strings.find(v)] as const);
    if (
      entity === NONE ||
      ext === NONE ||
      originating === NONE ||
      receiving === NONE ||
      pairs.some(([k, v]) => k === NONE || v === NONE)
    ) {
      return () => false;
    }
    const { createdGte, createdLte } = q;
    return (slot) =>
      t.entity[slot] === entity &&
      (ext === undefined || t.externalId[slot] === ext) &&
      (createdGte === undefined || (t.created[slot] as number) >= createdGte) &&
      (createdLte === undefined || (t.created[slot] as number) <= createdLte) &&
      (status === undefined || t.status[slot] === status) &&
      (originating === undefined || t.originating[slot] === originating) &&
      (receiving === undefined || t.receiving[slot] === receiving) &&
      pairs.every(([k, v]) => t.metadataValue(slot, k) === v);
  }

  private smallestCandidateList(q: ListQuery, filters: PaymentListFilters): SlotList {
    if (q.externalId !== undefined) {
      const slot = this.externalIdSlot(q.externalId);
      return slot === NONE ? EMPTY : SlotList.of(slot);
    }
    let best = this.byEntity.get(filters.entityId) ?? EMPTY;
    const consider = (list: SlotList | undefined) => {
      const candidate = list ?? EMPTY;
      if (candidate.length < best.length) best = candidate;
    };
    const strings = this.t.strings;
    for (const [k, v] of q.metadata) consider(this.byMetadata.list(strings.find(k), strings.find(v)));
    if (filters.status !== undefined) consider(this.byStatus.get(filters.status)?.list);
    if (filters.originatingAccountId !== undefined)
      consider(this.byOriginating.get(filters.originatingAccountId));
    if (filters.receivingAccountId !== undefined) consider(this.byReceiving.get(filters.receivingAccountId));
    return best;
  }

  /** Negative when slot `a` lists after `b` (is older), as `newestFirst` reversed (the slot is the sequence). */
  private compareAge(a: number, b: number): number {
    const created = this.t.created;
    return (created[a] as number) - (created[b] as number) || a - b;
  }

  /** First index whose payment is not older than `slot` (binary search). */
  private lowerBound(list: SlotList, slot: number): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareAge(list.at(mid), slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose createdMs is >= `ms` (or > `ms` when `after`). */
  private boundByTime(list: SlotList, ms: number, after: boolean): number {
    const created = this.t.created;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = created[list.at(mid)] as number;
      if (at < ms || (after && at === ms)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insertSorted(list: SlotList, slot: number): void {
    if (list.length === 0 || this.compareAge(list.at(list.length - 1), slot) < 0) list.push(slot);
    else list.insertAt(this.lowerBound(list, slot), slot);
  }

  private removeSorted(list: SlotList, slot: number): void {
    const at = this.lowerBound(list, slot);
    if (at < list.length && list.at(at) === slot) list.removeAt(at);
  }

  private addTo(index: Map<string, SlotList>, key: string, slot: number): void {
    let list = index.get(key);
    if (!list) {
      list = new SlotList();
      index.set(key, list);
    }
    this.insertSorted(list, slot);
  }

  private enterStatus(slot: number, status: PaymentStatus): void {
    let index = this.byStatus.get(status);
    if (!index) {
      index = { list: new SlotList(), live: 0 };
      this.byStatus.set(status, index);
    }
    this.insertSorted(index.list, slot);
    index.live++;
  }

  private leaveStatus(status: PaymentStatus): void {
    const index = this.byStatus.get(status);
    if (!index) return;
    index.live--;
    if (index.list.length > 64 && index.list.length > 2 * index.live) {
      const code = statusCode(status);
      const statuses = this.t.status;
      index.list.retain((slot) => statuses[slot] === code);
    }
  }

  private bumpPaid(accountId: string, by: number): void {
    const n = (this.paidCount.get(accountId) ?? 0) + by;
    if (n > 0) this.paidCount.set(accountId, n);
    else this.paidCount.delete(accountId);
  }

  private openOf(accountId: string): Set<number> {
    let set = this.open.get(accountId);
    if (!set) {
      set = new Set();
      this.open.set(accountId, set);
    }
    return set;
  }
}
