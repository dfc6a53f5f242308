/**
 * Idempotency records per partner (API key) and key. A record is in flight from the moment a request
 * claims the key until its response is stored; a stored response (2xx or 4xx) is replayed for 24 hours.
 * Server faults (5xx) are never stored, so a retry with the same key can still succeed.
 */
import { createHash } from "node:crypto";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** At most this many reused keys are listed as evidence; the count stays exact beyond it. */
export const REUSED_KEYS_LISTED = 100;

export interface StoredResponse {
  status: number;
  /** What the caller kept (idempotent-request.ts renders a kept payment as created). */
  body: unknown;
}

const IN_FLIGHT = 0;
const DONE = 1;
/** Released after a server error: any request may claim the key again (kept as reuse evidence). */
const RELEASED = 2;

/** One key's record: a flat object (no nested response), one per payment created. */
class IdempotencyRecord {
  state: typeof IN_FLIGHT | typeof DONE | typeof RELEASED = IN_FLIGHT;
  status = 0;
  body: unknown = undefined;
  constructor(
    /** The partner's records, which this record is in under `key` until it is swept or claimed again. */
    readonly partner: Map<string, IdempotencyRecord>,
    readonly key: string,
    readonly fingerprint: string,
    readonly expiresAtMs: number,
  ) {}
}

export type ClaimResult =
  | { kind: "claimed" }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "in-progress" }
  | { kind: "mismatch" };

/** JSON with object keys sorted at every level, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * What makes two requests "the same": route, entity and canonical body. The first 128 bits of a
 * SHA-256 (22 base64 characters), kept for every key for its retention.
 */
export function requestFingerprint(parts: { route: string; entityId: string; body: unknown }): string {
  return createHash("sha256")
    .update(`${parts.route}\n${parts.entityId}\n${canonicalJson(parts.body)}`)
    .digest()
    .toString("base64", 0, 16);
}

export class IdempotencyStore {
  /** Partner (a short hash of its API key, so the key itself is not kept) → key → record. */
  private readonly partners = new Map<string, Map<string, IdempotencyRecord>>();
  /**
   * Expiry queue in claim order (every record has the same TTL, so the oldest expiry is first): a
   * sweep pops expired records from the head and stops at the first live one, O(1) amortised per
   * claim. A record whose key was claimed again since is stale and only popped.
   */
  private queue: IdempotencyRecord[] = [];
  private queueHead = 0;
  private inFlight = 0;
  /** Keys seen with two different requests, and the first few, for `GET /_sandbox/stats`. */
  private readonly reusedSlots = new Set<string>();
  private readonly reusedKeysListed: string[] = [];

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  /** The last partner's short hash, so a create does not hash the API key twice (the state holds the key anyway). */
  private lastPartner: { key: string; hash: string } | undefined;

  private partnerHash(partnerKey: string): string {
    if (this.lastPartner?.key !== partnerKey) {
      const hash = createHash("sha256").update(partnerKey).digest("hex").slice(0, 16);
      this.lastPartner = { key: partnerKey, hash };
    }
    return this.lastPartner.hash;
  }

  private recordsOf(partnerKey: string): Map<string, IdempotencyRecord> {
    const hash = this.partnerHash(partnerKey);
    let records = this.partners.get(hash);
    if (!records) {
      records = new Map();
      this.partners.set(hash, records);
    }
    return records;
  }

  claim(partnerKey: string, key: string, fingerprint: string): ClaimResult {
    const records = this.recordsOf(partnerKey);
    const existing = records.get(key);
    const now = this.now();
    if (existing && existing.expiresAtMs > now) {
      if (existing.fingerprint !== fingerprint) this.noteReuse(partnerKey, key);
      if (existing.state !== RELEASED) {
        if (existing.fingerprint !== fingerprint) return { kind: "mismatch" };
        if (existing.state === IN_FLIGHT) return { kind: "in-progress" };
        return { kind: "replay", response: { status: existing.status, body: existing.body } };
      }
    }
    this.sweep();
    if (existing?.state === IN_FLIGHT) this.inFlight--;
    const record = new IdempotencyRecord(records, key, fingerprint, now + this.ttlMs);
    records.set(key, record);
    this.queue.push(record);
    this.inFlight++;
    return { kind: "claimed" };
  }

  /** Stores the answer to replay: its status and what the caller keeps of its body. */
  complete(partnerKey: string, key: string, status: number, body: unknown): void {
    const record = this.recordsOf(partnerKey).get(key);
    if (!record) return;
    if (record.state === IN_FLIGHT) this.inFlight--;
    record.state = DONE;
    record.status = status;
    record.body = body;
  }

  /** Forget a claim's response, which must not be replayed (a server error); any request may claim the key again. */
  release(partnerKey: string, key: string): void {
    const record = this.recordsOf(partnerKey).get(key);
    if (!record) return;
    if (record.state === IN_FLIGHT) this.inFlight--;
    record.state = RELEASED;
    record.status = 0;
    record.body = undefined;
  }

  inFlightCount(): number {
    return this.inFlight;
  }

  /** Records currently kept (live or not yet swept). */
  size(): number {
    let n = 0;
    for (const records of this.partners.values()) n += records.size;
    return n;
  }

  /** Distinct keys ever seen with two different requests, and the first `REUSED_KEYS_LISTED` of them. */
  reuseEvidence(): { count: number; keys: string[] } {
    return { count: this.reusedSlots.size, keys: [...this.reusedKeysListed] };
  }

  private noteReuse(partnerKey: string, key: string): void {
    const slot = `${this.partnerHash(partnerKey)}:${key}`;
    if (this.reusedSlots.has(slot)) return;
    this.reusedSlots.add(slot);
    if (this.reusedKeysListed.length < REUSED_KEYS_LISTED) this.reusedKeysListed.push(key);
  }

  /** Drops expired records from the oldest on; stops at the first live one, so memory stays bounded cheaply. */
  sweep(): void {
    const now = this.now();
    let head = this.queueHead;
    const queue = this.queue;
    const end = queue.length; // records pushed back below are looked at next time, not again now
    while (head < end && (queue[head] as IdempotencyRecord).expiresAtMs <= now) {
      const record = queue[head] as IdempotencyRecord;
      head++;
      if (record.partner.get(record.key) !== record) continue;
      if (record.state === IN_FLIGHT) {
        // Still being answered: look again on a later sweep.
        queue.push(record);
        continue;
      }
      record.partner.delete(record.key);
    }
    if (head > 1024 && head * 2 > queue.length) {
      this.queue = queue.slice(head);
      head = 0;
    }
    this.queueHead = head;
  }
}
