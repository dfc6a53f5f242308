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
  body: unknown;
}

interface IdempotencyRecord {
  fingerprint: string;
  inFlight: boolean;
  /** Released after a server error: any request may claim the key again (kept as reuse evidence). */
  released?: boolean;
  response?: StoredResponse;
  expiresAtMs: number;
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

/** What makes two requests "the same": route, entity and canonical body. */
export function requestFingerprint(parts: { route: string; entityId: string; body: unknown }): string {
  return createHash("sha256")
    .update(`${parts.route}\n${parts.entityId}\n${canonicalJson(parts.body)}`)
    .digest("base64");
}

export class IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  /**
   * Expiry queue in claim order (every record has the same TTL, so the oldest expiry is first): a
   * sweep pops expired entries from the head and stops at the first live one, O(1) amortised per
   * claim. An entry whose record was claimed again since is stale and only popped.
   */
  private queueSlots: string[] = [];
  private queueExpiry: number[] = [];
  private queueHead = 0;
  private inFlight = 0;
  /** Slots seen with two different requests, and the first few keys, for `GET /_sandbox/stats`. */
  private readonly reusedSlots = new Set<string>();
  private readonly reusedKeysListed: string[] = [];

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  /** The last partner's short hash, so a create does not hash the API key twice (the state holds the key anyway). */
  private lastPartner: { key: string; hash: string } | undefined;

  private slot(partnerKey: string, key: string): string {
    // The partner is identified by a hash of its API key so the key itself is not kept as a map key.
    if (this.lastPartner?.key !== partnerKey) {
      const hash = createHash("sha256").update(partnerKey).digest("hex").slice(0, 16);
      this.lastPartner = { key: partnerKey, hash };
    }
    const hash = this.lastPartner.hash;
    return `${hash}:${key}`;
  }

  claim(partnerKey: string, key: string, fingerprint: string): ClaimResult {
    const slot = this.slot(partnerKey, key);
    const existing = this.records.get(slot);
    const now = this.now();
    if (existing && existing.expiresAtMs > now) {
      if (existing.fingerprint !== fingerprint) this.noteReuse(slot, key);
      if (!existing.released) {
        if (existing.fingerprint !== fingerprint) return { kind: "mismatch" };
        if (existing.inFlight || !existing.response) return { kind: "in-progress" };
        return { kind: "replay", response: existing.response };
      }
    }
    this.sweep();
    if (existing?.inFlight) this.inFlight--;
    const expiresAtMs = now + this.ttlMs;
    this.records.set(slot, { fingerprint, inFlight: true, expiresAtMs });
    this.queueSlots.push(slot);
    this.queueExpiry.push(expiresAtMs);
    this.inFlight++;
    return { kind: "claimed" };
  }

  complete(partnerKey: string, key: string, response: StoredResponse): void {
    const record = this.records.get(this.slot(partnerKey, key));
    if (!record) return;
    if (record.inFlight) this.inFlight--;
    record.inFlight = false;
    record.response = response;
  }

  /** Forget a claim's response, which must not be replayed (a server error); any request may claim the key again. */
  release(partnerKey: string, key: string): void {
    const record = this.records.get(this.slot(partnerKey, key));
    if (!record) return;
    if (record.inFlight) this.inFlight--;
    record.inFlight = false;
    record.released = true;
    delete record.response;
  }

  inFlightCount(): number {
    return this.inFlight;
  }

  /** Records currently kept (live or not yet swept). */
  size(): number {
    return this.records.size;
  }

  /** Distinct keys ever seen with two different requests, and the first `REUSED_KEYS_LISTED` of them. */
  reuseEvidence(): { count: number; keys: string[] } {
    return { count: this.reusedSlots.size, keys: [...this.reusedKeysListed] };
  }

  private noteReuse(slot: string, key: string): void {
    if (this.reusedSlots.has(slot)) return;
    this.reusedSlots.add(slot);
    if (this.reusedKeysListed.length < REUSED_KEYS_LISTED) this.reusedKeysListed.push(key);
  }

  /** Drops expired records from the oldest on; stops at the first live one, so memory stays bounded cheaply. */
  sweep(): void {
    const now = this.now();
    let head = this.queueHead;
    const slots = this.queueSlots;
    const expiry = this.queueExpiry;
    const end = slots.length; // entries pushed back below are looked at next time, not again now
    while (head < end && (expiry[head] as number) <= now) {
      const slot = slots[head] as string;
      const at = expiry[head] as number;
      head++;
      const record = this.records.get(slot);
      if (!record || record.expiresAtMs !== at) continue;
      if (record.inFlight) {
        // Still being answered: look again on a later sweep.
        slots.push(slot);
        expiry.push(at);
        continue;
      }
      this.records.delete(slot);
    }
    if (head > 1024 && head * 2 > slots.length) {
      this.queueSlots = slots.slice(head);
      this.queueExpiry = expiry.slice(head);
      head = 0;
    }
    this.queueHead = head;
  }
}
