/**
 * Idempotency records per partner (API key) and key. A record is in flight from the moment a request
 * claims the key until its response is stored; a stored response (2xx or 4xx) is replayed for 24 hours.
 * Server faults (5xx) are never stored, so a retry with the same key can still succeed.
 */
import { createHash } from "node:crypto";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Above this many records, expired ones are dropped before a new key is stored. */
const SWEEP_THRESHOLD = 10_000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

interface IdempotencyRecord {
  fingerprint: string;
  inFlight: boolean;
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
    .digest("hex");
}

export class IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  private static slot(partnerKey: string, key: string): string {
    // The partner is identified by a hash of its API key so the key itself is not kept as a map key.
    return `${createHash("sha256").update(partnerKey).digest("hex").slice(0, 16)}:${key}`;
  }

  claim(partnerKey: string, key: string, fingerprint: string): ClaimResult {
    const slot = IdempotencyStore.slot(partnerKey, key);
    const existing = this.records.get(slot);
    if (existing && existing.expiresAtMs > this.now()) {
      if (existing.fingerprint !== fingerprint) return { kind: "mismatch" };
      if (existing.inFlight || !existing.response) return { kind: "in-progress" };
      return { kind: "replay", response: existing.response };
    }
    if (this.records.size >= SWEEP_THRESHOLD) this.sweep();
    this.records.set(slot, { fingerprint, inFlight: true, expiresAtMs: this.now() + this.ttlMs });
    return { kind: "claimed" };
  }

  complete(partnerKey: string, key: string, response: StoredResponse): void {
    const record = this.records.get(IdempotencyStore.slot(partnerKey, key));
    if (!record) return;
    record.inFlight = false;
    record.response = response;
  }

  /** Forget a claim whose response must not be replayed (a server error). */
  release(partnerKey: string, key: string): void {
    this.records.delete(IdempotencyStore.slot(partnerKey, key));
  }

  inFlightCount(): number {
    let n = 0;
    for (const r of this.records.values()) if (r.inFlight) n++;
    return n;
  }

  /** Drops expired records; called opportunistically so memory stays bounded. */
  sweep(): void {
    const now = this.now();
    for (const [slot, r] of this.records) if (!r.inFlight && r.expiresAtMs <= now) this.records.delete(slot);
  }
}
