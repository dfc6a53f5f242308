/**
 * Idempotency records per partner (API key) and key. A record is in flight from the moment a request
 * claims the key until its response is stored; a stored response (2xx or 4xx) is replayed for 24 hours.
 * Server faults (5xx) are never stored, so a retry with the same key can still succeed.
 */
import { createHash } from "node:crypto";
import { grown } from "./string-table.js";

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

/** How a kept body that is a stored payment becomes an integer and back (see `IdempotencyStore`). */
export interface BodyCodec {
  /** An integer >= 0 standing for `body`, or undefined to keep the body itself. */
  toRef(body: unknown): number | undefined;
  fromRef(ref: number): unknown;
}

const KEEP_AS_IS: BodyCodec = { toRef: () => undefined, fromRef: () => undefined };
/** `refs` value of a record whose body is in `bodies` (or has none). */
const NO_REF = -1;
/** Hash table values: 0 empty, -1 a removed record (probing goes on past it), else index + 1. */
const EMPTY = 0;
const REMOVED = -1;

/** The first 16 bytes of a SHA-256, as four 32-bit words. */
function digestWords(digest: Buffer): [number, number, number, number] {
  return [digest.readInt32LE(0), digest.readInt32LE(4), digest.readInt32LE(8), digest.readInt32LE(12)];
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

/**
 * The records by columns, one row per claim, in claim order: a JS object per record with its key
 * and fingerprint strings and a Map entry cost ~240 bytes for every payment ever created; a row
 * here costs ~50 (a 128-bit digest of partner and key, the 128-bit fingerprint, expiry, state,
 * status, and the stored payment's slot) plus ~8 in the hash table. The key itself is not kept: a
 * claim finds its record by the digest (a SHA-256, so two keys never meet in practice, as two
 * requests never share a fingerprint). A stored body that is not a payment (an error, an entity) is
 * kept as itself in a side Map.
 *
 * Every record has the same TTL, so claim order is expiry order: a sweep removes expired rows from
 * the head and stops at the first live one, O(1) amortised per claim; once the head passes half the
 * rows they are moved down and the hash table rebuilt. A row whose key was claimed again since is
 * stale (the table no longer names it) and only passed over.
 */
export class IdempotencyStore {
  private capacity = 1024;
  /** Rows in use: [head, count) are kept; the head's are the oldest. */
  private count = 0;
  private head = 0;
  private digests = new Int32Array(this.capacity * 4);
  private fingerprints = new Int32Array(this.capacity * 4);
  private expires = new Float64Array(this.capacity);
  private states = new Uint8Array(this.capacity);
  private statuses = new Uint16Array(this.capacity);
  private refs = new Int32Array(this.capacity);
  /** Bodies kept as themselves, by row. */
  private bodies = new Map<number, unknown>();
  /** Open addressing by the digest's first word, linear probing; at most half full. */
  private table = new Int32Array(2048);
  /** Table entries that are not EMPTY (live and REMOVED), which decide when to rebuild it. */
  private occupied = 0;
  private live = 0;
  private inFlight = 0;
  /** Keys seen with two different requests, and the first few, for `GET /_sandbox/stats`. */
  private readonly reusedSlots = new Set<string>();
  private readonly reusedKeysListed: string[] = [];

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly codec: BodyCodec = KEEP_AS_IS,
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

  /** Partner (a short hash of its API key, so the key itself is not kept) and key, as 128 bits. */
  private keyDigest(partnerKey: string, key: string): [number, number, number, number] {
    return digestWords(
      createHash("sha256")
        .update(`${this.partnerHash(partnerKey)}\n${key}`)
        .digest(),
    );
  }

  claim(partnerKey: string, key: string, fingerprint: string): ClaimResult {
    const digest = this.keyDigest(partnerKey, key);
    const fp = fingerprintWords(fingerprint);
    const at = this.position(digest);
    const entry = this.table[at] as number;
    const existing = entry > 0 ? entry - 1 : -1;
    const now = this.now();
    if (existing >= 0 && (this.expires[existing] as number) > now) {
      const same = this.sameFingerprint(existing, fp);
      if (!same) this.noteReuse(partnerKey, key);
      const state = this.states[existing];
      if (state !== RELEASED) {
        if (!same) return { kind: "mismatch" };
        if (state === IN_FLIGHT) return { kind: "in-progress" };
        return {
          kind: "replay",
          response: { status: this.statuses[existing] as number, body: this.bodyOf(existing) },
        };
      }
    }
    if (existing >= 0 && this.states[existing] === IN_FLIGHT) this.inFlight--;
    const row = this.append(digest, fp, now + this.ttlMs);
    this.point(digest, row);
    this.inFlight++;
    this.sweep();
    return { kind: "claimed" };
  }

  /** Stores the answer to replay: its status and what the caller keeps of its body. */
  complete(partnerKey: string, key: string, status: number, body: unknown): void {
    const row = this.find(partnerKey, key);
    if (row < 0) return;
    if (this.states[row] === IN_FLIGHT) this.inFlight--;
    this.states[row] = DONE;
    this.statuses[row] = status;
    const ref = this.codec.toRef(body);
    this.refs[row] = ref ?? NO_REF;
    if (ref === undefined && body !== undefined) this.bodies.set(row, body);
    else this.bodies.delete(row);
  }

  /** Forget a claim's response, which must not be replayed (a server error); any request may claim the key again. */
  release(partnerKey: string, key: string): void {
    const row = this.find(partnerKey, key);
    if (row < 0) return;
    if (this.states[row] === IN_FLIGHT) this.inFlight--;
    this.states[row] = RELEASED;
    this.statuses[row] = 0;
    this.refs[row] = NO_REF;
    this.bodies.delete(row);
  }

  inFlightCount(): number {
    return this.inFlight;
  }

  /** Records currently kept (live or not yet swept). */
  size(): number {
    return this.live;
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
    const end = this.count; // rows moved to the end below are looked at next time, not again now
    while (this.head < end && (this.expires[this.head] as number) <= now) {
      const row = this.head++;
      const digest = this.digestOf(row);
      const at = this.position(digest);
      if (this.table[at] !== row + 1) {
        this.bodies.delete(row); // stale: the key was claimed again since
        continue;
      }
      if (this.states[row] === IN_FLIGHT) {
        // Still being answered: look again on a later sweep.
        this.point(digest, this.copyRow(row));
        continue;
      }
      this.table[at] = REMOVED;
      this.live--;
      this.bodies.delete(row);
    }
    if (this.head > 1024 && this.head * 2 > this.count) this.compact();
  }

  private find(partnerKey: string, key: string): number {
    const entry = this.table[this.position(this.keyDigest(partnerKey, key))] as number;
    return entry > 0 ? entry - 1 : -1;
  }

  private bodyOf(row: number): unknown {
    const ref = this.refs[row] as number;
    return ref === NO_REF ? this.bodies.get(row) : this.codec.fromRef(ref);
  }

  private sameFingerprint(row: number, fp: readonly number[]): boolean {
    const f = this.fingerprints;
    return (
      f[row * 4] === fp[0] && f[row * 4 + 1] === fp[1] && f[row * 4 + 2] === fp[2] && f[row * 4 + 3] === fp[3]
    );
  }

  private digestOf(row: number): [number, number, number, number] {
    const d = this.digests;
    return [
      d[row * 4] as number,
      d[row * 4 + 1] as number,
      d[row * 4 + 2] as number,
      d[row * 4 + 3] as number,
    ];
  }

  /** Where the digest's row is in the table, or the empty place it would go. */
  private position(digest: readonly number[]): number {
    const table = this.table;
    const mask = table.length - 1;
    const d = this.digests;
    for (let i = (digest[0] as number) & mask; ; i = (i + 1) & mask) {
      const entry = table[i] as number;
      if (entry === EMPTY) return i;
      if (entry === REMOVED) continue;
      const r = (entry - 1) * 4;
      if (d[r] === digest[0] && d[r + 1] === digest[1] && d[r + 2] === digest[2] && d[r + 3] === digest[3])
        return i;
    }
  }

  /** Makes the table name `row` for its digest (a new key, or one claimed again). */
  private point(digest: readonly number[], row: number): void {
    const at = this.position(digest);
    if (this.table[at] === EMPTY) {
      this.live++;
      this.occupied++;
    }
    this.table[at] = row + 1;
    if (this.occupied * 2 > this.table.length) this.rebuildTable(0);
  }

  private append(digest: readonly number[], fp: readonly number[], expiresAtMs: number): number {
    if (this.count === this.capacity) this.grow();
    const row = this.count++;
    this.digests.set(digest, row * 4);
    this.fingerprints.set(fp, row * 4);
    this.expires[row] = expiresAtMs;
    this.states[row] = IN_FLIGHT;
    this.statuses[row] = 0;
    this.refs[row] = NO_REF;
    return row;
  }

  /** A copy of `row` at the end (same expiry, state and answer); returns the new row. */
  private copyRow(row: number): number {
    const to = this.append(
      this.digestOf(row),
      Array.from(this.fingerprints.subarray(row * 4, row * 4 + 4)),
      this.expires[row] as number,
    );
    this.states[to] = this.states[row] as number;
    this.statuses[to] = this.statuses[row] as number;
    this.refs[to] = this.refs[row] as number;
    if (this.bodies.has(row)) this.bodies.set(to, this.bodies.get(row));
    this.bodies.delete(row);
    return to;
  }

  private grow(): void {
    const n = this.capacity * 2;
    this.digests = grown(this.digests, n * 4);
    this.fingerprints = grown(this.fingerprints, n * 4);
    this.expires = grown(this.expires, n);
    this.states = grown(this.states, n);
    this.statuses = grown(this.statuses, n);
    this.refs = grown(this.refs, n);
    this.capacity = n;
  }

  /** Moves rows [head, count) down to 0 and renumbers the table and the side bodies. */
  private compact(): void {
    const shift = this.head;
    const n = this.count - shift;
    this.digests.copyWithin(0, shift * 4, this.count * 4);
    this.fingerprints.copyWithin(0, shift * 4, this.count * 4);
    this.expires.copyWithin(0, shift, this.count);
    this.states.copyWithin(0, shift, this.count);
    this.statuses.copyWithin(0, shift, this.count);
    this.refs.copyWithin(0, shift, this.count);
    const bodies = new Map<number, unknown>();
    for (const [row, body] of this.bodies) if (row >= shift) bodies.set(row - shift, body);
    this.bodies = bodies;
    this.count = n;
    this.head = 0;
    this.rebuildTable(shift);
  }

  /** A table sized for the live rows (at most a quarter full), every live row's entry moved down by `shift`. */
  private rebuildTable(shift: number): void {
    const old = this.table;
    let size = 2048;
    while (size < this.live * 4) size *= 2;
    this.table = new Int32Array(size);
    const mask = size - 1;
    for (let j = 0; j < old.length; j++) {
      const entry = old[j] as number;
      if (entry <= 0) continue;
      const row = entry - 1 - shift;
      let i = (this.digests[row * 4] as number) & mask;
      while (this.table[i] !== EMPTY) i = (i + 1) & mask;
      this.table[i] = row + 1;
    }
    this.occupied = this.live;
  }
}

/** The 128-bit fingerprint (`requestFingerprint`'s base64) as four words; any other string is hashed to 128 bits. */
function fingerprintWords(fingerprint: string): [number, number, number, number] {
  const bytes = Buffer.from(fingerprint, "base64");
  if (bytes.length === 16 && bytes.toString("base64", 0, 16) === fingerprint) return digestWords(bytes);
  return digestWords(createHash("sha256").update(fingerprint).digest());
}
