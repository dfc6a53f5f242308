/**
 * The index of rows whose payment needs a look (docs/design.md §3.5), in Redis (keys in
 * batches/redis-layout.ts). A webhook delivery is a hint: it *marks* its payment's row in its batch's
 * `looks` (scored by the mark's time, Redis clock) with the payment id as a hint; the reconciler reads
 * a batch's marks once they went quiet and looks at their payments a page at a time.
 *
 * - A mark is cheap: one script call for every delivery gathered during a round trip.
 * - A mark made again moves its score forward (never to the same value), so a reconciler clears a
 *   mark only when its score is still the one it read: a delivery that came while the page was read
 *   keeps its mark, and is looked at again.
 * - Which batches have marks is `lookDue`: batch → its earliest mark. A reconciler *claims* a batch
 *   by moving that score ahead by a lease (one script call, so two processes never claim the same
 *   batch at once), and when done sets it to the batch's earliest remaining mark, or removes it.
 *   A process that dies with a claim only delays the batch by the lease.
 * - Hints that name no row (a delivery without our metadata, a look asked for by payment id alone)
 *   go to `looseLooks` and are claimed as the pseudo-batch {@link LOOSE_BATCH}.
 *
 * Cost per row stays flat: every call touches the marks it is given or the due ones it reads.
 */
import { redisLayout } from "../batches/index.js";
import { luaScript, type RedisClient } from "../redis/index.js";

/** The member of `lookDue` standing for the loose hints (a batch id never starts with `~`). */
export const LOOSE_BATCH = "~loose";

/** What a delivery tells about the payment it names, kept with the row's mark. */
export interface LookHint {
  paymentId: string;
  /** The attempt the payment's metadata names (0 when unknown). */
  attempt: number;
  /** When the change the delivery announces happened (ms, the service's clock; 0 when unknown). */
  occurredAtMs: number;
}

/** A row to mark: its batch, its `payouts_row` value, and what the delivery said. */
export interface LookMark {
  batchId: string;
  /** The row's `payouts_row` metadata value (its row key, shortened when very long). */
  member: string;
  hint?: LookHint | undefined;
}

/** A mark as read back: with the score it had, which a clear must find unchanged. */
export interface DueMark {
  member: string;
  score: string;
  hint: LookHint | undefined;
}

export interface Claim {
  batchId: string;
  /** The claim's own score in `lookDue`: whoever still finds it there holds the claim. */
  token: string;
  /** Redis time (ms) when claimed. */
  nowMs: number;
  /**
   * The batch has no row left to send (its `queued` count is 0): the marks still to come are its last
   * payments settling, so it is looked at after the shorter draining quiet time.
   */
  draining: boolean;
}

export function encodeHint(hint: LookHint): string {
  return `${hint.attempt}|${Math.max(0, Math.floor(hint.occurredAtMs))}|${hint.paymentId}`;
}

export function decodeHint(text: string | null | undefined): LookHint | undefined {
  if (!text) return undefined;
  const first = text.indexOf("|");
  const second = text.indexOf("|", first + 1);
  if (first < 0 || second < 0) return undefined;
  const paymentId = text.slice(second + 1);
  if (!paymentId) return undefined;
  return {
    attempt: Number(text.slice(0, first)) || 0,
    occurredAtMs: Number(text.slice(first + 1, second)) || 0,
    paymentId,
  };
}

/** The index's scripts (./lua/, each file saying its KEYS and ARGV). */
const MARK = luaScript(new URL("./lua/mark-looks.lua", import.meta.url), { LOOSE_BATCH });
const CLAIM = luaScript(new URL("./lua/claim-looks.lua", import.meta.url), { LOOSE_BATCH });
const RENEW = luaScript(new URL("./lua/renew-look.lua", import.meta.url));
const FINISH = luaScript(new URL("./lua/finish-look.lua", import.meta.url));
const CLEAR = luaScript(new URL("./lua/clear-looks.lua", import.meta.url));

export class LookIndex {
  private readonly keys: ReturnType<typeof redisLayout>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = redisLayout(prefix);
  }

  /**
   * Marks rows (and loose payment ids: `batchId` {@link LOOSE_BATCH}, member the payment id). With
   * `backdateMs`, the marks are that much older than now (the sweep's are due at once).
   */
  async mark(marks: readonly LookMark[], backdateMs = 0): Promise<void> {
    if (marks.length === 0) return;
    const batches = new Map<string, number>();
    const triples: string[] = [];
    for (const m of marks) {
      let b = 0;
      if (m.batchId !== LOOSE_BATCH) {
        b = batches.get(m.batchId) ?? batches.size + 1;
        batches.set(m.batchId, b);
      }
      triples.push(String(b), m.member, m.hint ? encodeHint(m.hint) : "");
    }
    const ids = [...batches.keys()];
    const keys = [this.keys.lookDue, this.keys.looseLooks];
    for (const id of ids) keys.push(this.keys.looks(id), this.keys.lookHints(id));
    await MARK.run(this.redis, keys, [
      String(ids.length),
      ...ids,
      String(Math.max(0, backdateMs)),
      ...triples,
    ]);
  }

  /**
   * Claims up to `max` batches whose earliest mark went quiet (`quietMs`; `drainingQuietMs` for a batch
   * with no row left to send), for `leaseMs`.
   */
  async claim(quietMs: number, leaseMs: number, max: number, drainingQuietMs = quietMs): Promise<Claim[]> {
    const answer = (await CLAIM.run(
      this.redis,
      [this.keys.lookDue],
      [quietMs, leaseMs, max, Math.min(drainingQuietMs, quietMs), this.keys.batch("")],
    )) as string[];
    const nowMs = Number(answer[0]);
    const claims: Claim[] = [];
    for (let i = 1; i + 2 < answer.length; i += 3) {
      claims.push({ batchId: answer[i]!, token: answer[i + 1]!, nowMs, draining: answer[i + 2] === "1" });
    }
    return claims;
  }

  /** Moves the claim's lease on (`false`: another process holds the batch now). */
  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const now = await this.redisTimeMs();
    const token = String(now + leaseMs);
    const held = Number(
      await RENEW.run(this.redis, [this.keys.lookDue], [claim.batchId, claim.token, token]),
    );
    if (held !== 1) return false;
    claim.token = token;
    claim.nowMs = now;
    return true;
  }

  /**
   * Ends a claim: the batch is due again from its earliest remaining mark, or, with `retryAtMs`
   * (a mark time), from then.
   */
  async finish(claim: Claim, retryAtMs?: number): Promise<boolean> {
    const held = await FINISH.run(
      this.redis,
      [this.keys.lookDue, this.looksKey(claim.batchId)],
      [claim.batchId, claim.token, retryAtMs === undefined ? "" : String(Math.floor(retryAtMs))],
    );
    return Number(held) === 1;
  }

  /** Up to `limit` marks of the batch made at or before `beforeMs` (oldest first), with their hints. */
  async dueMarks(batchId: string, beforeMs: number, limit: number): Promise<DueMark[]> {
    const flat = await this.redis.zrangebyscore(
      this.looksKey(batchId),
      "-inf",
      beforeMs,
      "WITHSCORES",
      "LIMIT",
      0,
      limit,
    );
    const marks: DueMark[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2)
      marks.push({ member: flat[i]!, score: flat[i + 1]!, hint: undefined });
    if (marks.length === 0 || batchId === LOOSE_BATCH) return marks;
    const hints = await this.redis.hmget(this.keys.lookHints(batchId), ...marks.map((m) => m.member));
    marks.forEach((m, i) => {
      m.hint = decodeHint(hints[i]);
    });
    return marks;
  }

  /** Clears the marks that were not made again since they were read. Returns how many. */
  async clear(batchId: string, marks: readonly DueMark[]): Promise<number> {
    if (marks.length === 0) return 0;
    const keys =
      batchId === LOOSE_BATCH
        ? [this.keys.looseLooks]
        : [this.keys.looks(batchId), this.keys.lookHints(batchId)];
    const args: string[] = [];
    for (const m of marks) args.push(m.member, m.score);
    return Number(await CLEAR.run(this.redis, keys, args));
  }

  /** How many payments of the batch's rows were created in each of these seconds (service clock). */
  async createdPerSecond(batchId: string, seconds: readonly number[]): Promise<Map<number, number>> {
    const counts = new Map<number, number>();
    if (seconds.length === 0) return counts;
    const values = await this.redis.hmget(this.keys.createdPerSecond(batchId), ...seconds.map(String));
    seconds.forEach((s, i) => {
      counts.set(s, Number(values[i] ?? 0));
    });
    return counts;
  }

  /** Marks still waiting in a batch (tests, status). */
  async pending(batchId: string): Promise<number> {
    return this.redis.zcard(this.looksKey(batchId));
  }

  async redisTimeMs(): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  private looksKey(batchId: string): string {
    return batchId === LOOSE_BATCH ? this.keys.looseLooks : this.keys.looks(batchId);
  }
}
