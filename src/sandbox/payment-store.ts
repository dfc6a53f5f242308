/**
 * The sandbox's payments and their indexes, so that it can hold millions of them and every operation
 * stays O(1) or O(log n) in what it stores (plus what a list call skips because a second filter
 * refuses it).
 *
 * Every index is an array sorted oldest first by (createdMs, seq), the list order reversed. A new
 * payment is appended (its clock only moves forward; if it ever goes back, a binary search places
 * the payment). Metadata changes only by PATCH while scheduled, so removing from those arrays is
 * rare. Statuses change all the time: a payment leaving a status stays in that status's array
 * (readers check the status anyway) until stale entries outnumber live ones and the array is
 * compacted, O(1) amortised. A payment never enters the same status twice.
 */
import type { PaymentStatus } from "../payouts-api/wire-types.js";
import { type ListQuery, matchesCommonFilters } from "./pagination.js";
import type { StoredPayment } from "./payment-record.js";

/** Negative when `a` lists after `b` (is older), as `newestFirst` reversed. */
function compareAge(a: StoredPayment, b: StoredPayment): number {
  return a.createdMs - b.createdMs || a.seq - b.seq;
}

/** First index whose item is not older than `item` (binary search). */
function lowerBound(list: readonly StoredPayment[], item: StoredPayment): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareAge(list[mid] as StoredPayment, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose createdMs is >= `ms` (or > `ms` when `after`). */
function boundByTime(list: readonly StoredPayment[], ms: number, after: boolean): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = (list[mid] as StoredPayment).createdMs;
    if (at < ms || (after && at === ms)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(list: StoredPayment[], item: StoredPayment): void {
  const last = list[list.length - 1];
  if (last === undefined || compareAge(last, item) < 0) list.push(item);
  else list.splice(lowerBound(list, item), 0, item);
}

function removeSorted(list: StoredPayment[], item: StoredPayment): void {
  const at = lowerBound(list, item);
  if (list[at] === item) list.splice(at, 1);
}

function addTo(index: Map<string, StoredPayment[]>, key: string, item: StoredPayment): void {
  const list = index.get(key);
  if (list) insertSorted(list, item);
  else index.set(key, [item]);
}

/**
 * Metadata key → value → the payments with that pair. Most pairs (a row key) belong to one payment,
 * which is kept bare instead of in a one-element array; the value strings are the payments' own.
 */
type MetadataIndex = Map<string, Map<string, StoredPayment | StoredPayment[]>>;

function addMetadata(index: MetadataIndex, key: string, value: string, item: StoredPayment): void {
  let values = index.get(key);
  if (!values) {
    values = new Map();
    index.set(key, values);
  }
  const entry = values.get(value);
  if (entry === undefined) values.set(value, item);
  else if (Array.isArray(entry)) insertSorted(entry, item);
  else {
    const pair = [entry];
    insertSorted(pair, item);
    values.set(value, pair);
  }
}

function removeMetadata(index: MetadataIndex, key: string, value: string, item: StoredPayment): void {
  const values = index.get(key);
  const entry = values?.get(value);
  if (!values || entry === undefined) return;
  if (Array.isArray(entry)) {
    removeSorted(entry, item);
    if (entry.length === 1) values.set(value, entry[0] as StoredPayment);
  } else if (entry === item) {
    values.delete(value);
    if (values.size === 0) index.delete(key);
  }
}

function metadataList(index: MetadataIndex, key: string, value: string): readonly StoredPayment[] {
  const entry = index.get(key)?.get(value);
  if (entry === undefined) return EMPTY;
  return Array.isArray(entry) ? entry : [entry];
}
const EMPTY: readonly StoredPayment[] = [];
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
  private readonly byId = new Map<string, StoredPayment>();
  private readonly byExternalId = new Map<string, StoredPayment>();
  private readonly byEntity = new Map<string, StoredPayment[]>();
  private readonly byMetadata: MetadataIndex = new Map();
  private readonly byStatus = new Map<PaymentStatus, { list: StoredPayment[]; live: number }>();
  private readonly byOriginating = new Map<string, StoredPayment[]>();
  private readonly byReceiving = new Map<string, StoredPayment[]>();
  /** Payments not failed or canceled, per receiving account. */
  private readonly paidCount = new Map<string, number>();
  /** Scheduled or in-progress payments per account (either side), oldest first (Set order). */
  private readonly open = new Map<string, Set<StoredPayment>>();
  /** The last value stored under each metadata key (at most 64 keys), see `shareValues`. */
  private readonly lastValue = new Map<string, string>();

  get size(): number {
    return this.byId.size;
  }

  get(id: string): StoredPayment | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Every payment, oldest first. */
  values(): IterableIterator<StoredPayment> {
    return this.byId.values();
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
    return this.byExternalId.get(externalId);
  }

  add(stored: StoredPayment): void {
    const p = stored;
    this.byId.set(stored.id, stored);
    if (stored.externalId !== undefined) this.byExternalId.set(stored.externalId, stored);
    addTo(this.byEntity, stored.entityId, stored);
    this.enterStatus(stored, p.status);
    addTo(this.byOriginating, p.originatingAccountId, stored);
    addTo(this.byReceiving, p.receivingAccountId, stored);
    if (stored.metadata) this.shareValues(stored.metadata);
    for (const [k, v] of Object.entries(stored.metadata ?? {})) addMetadata(this.byMetadata, k, v, stored);
    if (!UNPAID.includes(p.status)) this.bumpPaid(p.receivingAccountId, 1);
    if (OPEN.includes(p.status)) {
      this.openOf(p.originatingAccountId).add(stored);
      this.openOf(p.receivingAccountId).add(stored);
    }
  }

  /** Moves a payment to `to`, keeping the indexes true. */
  setStatus(stored: StoredPayment, to: PaymentStatus): void {
    const p = stored;
    const from = p.status;
    if (from === to) return;
    this.leaveStatus(from);
    p.status = to;
    this.enterStatus(stored, to);
    if (!UNPAID.includes(from) && UNPAID.includes(to)) this.bumpPaid(p.receivingAccountId, -1);
    if (OPEN.includes(from) && !OPEN.includes(to)) {
      for (const account of [p.originatingAccountId, p.receivingAccountId]) {
        const set = this.open.get(account);
        set?.delete(stored);
        if (set?.size === 0) this.open.delete(account);
      }
    }
  }

  /** Replaces a payment's metadata, keeping the metadata index true. */
  setMetadata(stored: StoredPayment, metadata: Record<string, string>): void {
    const before = stored.metadata ?? {};
    for (const [k, v] of Object.entries(before)) {
      if (metadata[k] !== v) removeMetadata(this.byMetadata, k, v, stored);
    }
    for (const [k, v] of Object.entries(metadata)) {
      if (before[k] !== v) addMetadata(this.byMetadata, k, v, stored);
    }
    stored.metadata = metadata;
  }

  /** Whether the payee has a payment that is not failed or canceled ("paid before"). */
  hasBeenPaid(receivingAccountId: string): boolean {
    return (this.paidCount.get(receivingAccountId) ?? 0) > 0;
  }

  /** The oldest scheduled or in-progress payment using the account on either side. */
  oldestOpenPaymentOf(accountId: string): StoredPayment | undefined {
    const set = this.open.get(accountId);
    return set ? set.values().next().value : undefined;
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
    const matches = (p: StoredPayment) =>
      p.entityId === filters.entityId &&
      matchesCommonFilters(p, q) &&
      (filters.status === undefined || p.status === filters.status) &&
      (filters.originatingAccountId === undefined ||
        p.originatingAccountId === filters.originatingAccountId) &&
      (filters.receivingAccountId === undefined || p.receivingAccountId === filters.receivingAccountId);
    // [lo, hi): the part of `list` inside the created[gte]/created[lte] bounds.
    let lo = q.createdGte === undefined ? 0 : boundByTime(list, q.createdGte, false);
    let hi = q.createdLte === undefined ? list.length : boundByTime(list, q.createdLte, true);
    const found: StoredPayment[] = [];
    if (cursor && q.endingBefore !== undefined) {
      // The `limit` matches just newer than the cursor, found oldest first, returned newest first.
      const after = lowerBound(list, cursor);
      lo = Math.max(lo, list[after] === cursor ? after + 1 : after);
      for (let i = lo; i < hi && found.length <= q.limit; i++) {
        const p = list[i] as StoredPayment;
        if (matches(p)) found.push(p);
      }
      const hasMore = found.length > q.limit;
      return { data: found.slice(0, q.limit).reverse(), hasMore };
    }
    if (cursor) hi = Math.min(hi, lowerBound(list, cursor));
    for (let i = hi - 1; i >= lo && found.length <= q.limit; i--) {
      const p = list[i] as StoredPayment;
      if (matches(p)) found.push(p);
    }
    const hasMore = found.length > q.limit;
    return { data: found.slice(0, q.limit), hasMore };
  }

  private smallestCandidateList(q: ListQuery, filters: PaymentListFilters): readonly StoredPayment[] {
    if (q.externalId !== undefined) {
      const one = this.byExternalId.get(q.externalId);
      return one ? [one] : EMPTY;
    }
    let best = this.byEntity.get(filters.entityId) ?? EMPTY;
    const consider = (list: readonly StoredPayment[] | undefined) => {
      const candidate = list ?? EMPTY;
      if (candidate.length < best.length) best = candidate;
    };
    for (const [k, v] of q.metadata) consider(metadataList(this.byMetadata, k, v));
    if (filters.status !== undefined) consider(this.byStatus.get(filters.status)?.list);
    if (filters.originatingAccountId !== undefined)
      consider(this.byOriginating.get(filters.originatingAccountId));
    if (filters.receivingAccountId !== undefined) consider(this.byReceiving.get(filters.receivingAccountId));
    return best;
  }

  /**
   * A value equal to the last one stored under its key (a batch id on every row of a batch) is
   * replaced by that string, so a million payments keep one copy of it instead of one each.
   */
  private shareValues(metadata: Record<string, string>): void {
    for (const k in metadata) {
      const v = metadata[k] as string;
      const last = this.lastValue.get(k);
      if (last === v) metadata[k] = last;
      else if (this.lastValue.size < 64 || last !== undefined) this.lastValue.set(k, v);
    }
  }

  private enterStatus(stored: StoredPayment, status: PaymentStatus): void {
    const index = this.byStatus.get(status);
    if (!index) {
      this.byStatus.set(status, { list: [stored], live: 1 });
      return;
    }
    insertSorted(index.list, stored);
    index.live++;
  }

  private leaveStatus(status: PaymentStatus): void {
    const index = this.byStatus.get(status);
    if (!index) return;
    index.live--;
    if (index.list.length > 64 && index.list.length > 2 * index.live) {
      index.list = index.list.filter((p) => p.status === status);
    }
  }

  private bumpPaid(accountId: string, by: number): void {
    const n = (this.paidCount.get(accountId) ?? 0) + by;
    if (n > 0) this.paidCount.set(accountId, n);
    else this.paidCount.delete(accountId);
  }

  private openOf(accountId: string): Set<StoredPayment> {
    let set = this.open.get(accountId);
    if (!set) {
      set = new Set();
      this.open.set(accountId, set);
    }
    return set;
  }
}
