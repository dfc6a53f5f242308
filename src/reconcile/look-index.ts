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
import { defineLuaScript, redisLayout, runScript } from "../batches/index.js";
import type { RedisClient } from "../redis/index.js";

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

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Marks rows. KEYS: due, loose, then (looks, hints) per batch. ARGV: number of batches n, their ids,
 * backdate ms (a mark that is due at once: the sweep's), then triples (batch number 1..n or 0 for a
 * loose payment id, member, hint or ''). A mark's score is now (minus the backdate), or one more than
 * its previous score if that is not older; a hint replaces the stored one unless that one announced a
 * later change.
 */
const MARK = defineLuaScript(
  "reconcileMarkLooks",
  `${NOW}
local n = tonumber(ARGV[1])
local at = now - tonumber(ARGV[n + 2])
local function occurred(hint)
  local a = string.find(hint, '|', 1, true)
  local b = a and string.find(hint, '|', a + 1, true)
  return b and tonumber(string.sub(hint, a + 1, b - 1)) or 0
end
local function mark(zset, member)
  local old = redis.call('ZSCORE', zset, member)
  local score = at
  if old and tonumber(old) >= score then score = tonumber(old) + 1 end
  redis.call('ZADD', zset, score, member)
  return score
end
-- Each batch's earliest mark of this call, listed among the due batches once at the end.
local listed = {}
for j = n + 3, #ARGV, 3 do
  local b, member, hint = tonumber(ARGV[j]), ARGV[j + 1], ARGV[j + 2]
  if b == 0 then
    local score = mark(KEYS[2], member)
    redis.call('ZADD', KEYS[1], 'NX', score, '${LOOSE_BATCH}')
  else
    local score = mark(KEYS[1 + 2 * b], member)
    if hint ~= '' then
      local prev = redis.call('HGET', KEYS[2 + 2 * b], member)
      if not prev or occurred(prev) <= occurred(hint) then redis.call('HSET', KEYS[2 + 2 * b], member, hint) end
    end
    if not listed[b] or score < listed[b] then listed[b] = score end
  end
end
for b, score in pairs(listed) do redis.call('ZADD', KEYS[1], 'NX', score, ARGV[1 + b]) end
return 1
`,
);

/**
 * Claims up to ARGV[3] batches whose earliest mark is at least the quiet time old, or, for a batch
 * with no row left to send (its counts' `queued` is 0), the shorter draining quiet time. KEYS: due.
 * ARGV: quiet ms, lease ms, max, draining quiet ms, the key prefix of batches (`<p>:batch:`; a batch's
 * counts are `<prefix><id>:counts`, in the slot of the prefix's hash tag). Returns
 * {now, id1, token1, draining1, ...}.
 */
const CLAIM = defineLuaScript(
  "reconcileClaimLooks",
  `${NOW}
local max = tonumber(ARGV[3])
local quiet_before = now - tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]), 'WITHSCORES', 'LIMIT', 0, max + 100)
local out = {tostring(now)}
local token = now + tonumber(ARGV[2])
local claimed = 0
for j = 1, #ids, 2 do
  if claimed >= max then break end
  local id, score = ids[j], tonumber(ids[j + 1])
  local draining = false
  if id ~= '${LOOSE_BATCH}' then
    local queued = redis.call('HGET', ARGV[5] .. id .. ':counts', 'queued')
    draining = (not queued) or tonumber(queued) <= 0
  end
  if score <= quiet_before or draining then
    redis.call('ZADD', KEYS[1], token, id)
    out[#out + 1] = id
    out[#out + 1] = tostring(token)
    out[#out + 1] = draining and '1' or '0'
    claimed = claimed + 1
  end
end
return out
`,
);

/** KEYS: due. ARGV: batch, token, new token. Moves a held claim's lease on; 0 when it is not held. */
const RENEW = defineLuaScript(
  "reconcileRenewLook",
  `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`,
);

/**
 * Ends a held claim. KEYS: due, the batch's looks. ARGV: batch, token, retry score ('' = none). With a
 * retry score the batch is due again from it (a look that failed); else it is due from its earliest
 * remaining mark, or leaves `due` when it has none. Returns 0 when the claim was not held.
 */
const FINISH = defineLuaScript(
  "reconcileFinishLook",
  `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #first == 0 then redis.call('ZREM', KEYS[1], ARGV[1]) else redis.call('ZADD', KEYS[1], first[2], ARGV[1]) end
return 1
`,
);

/**
 * Clears marks that still have the score they were read with. KEYS: looks, hints ('' hints: none).
 * ARGV: member, score pairs. Returns how many were cleared.
 */
const CLEAR = defineLuaScript(
  "reconcileClearLooks",
  `
local cleared = 0
for j = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[j])
  if score and tonumber(score) == tonumber(ARGV[j + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[j])
    if KEYS[2] then redis.call('HDEL', KEYS[2], ARGV[j]) end
    cleared = cleared + 1
  end
end
return cleared
`,
);

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
    await runScript(this.redis, MARK, keys, [
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
    const answer = (await runScript(
      this.redis,
      CLAIM,
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
      await runScript(this.redis, RENEW, [this.keys.lookDue], [claim.batchId, claim.token, token]),
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
    const held = await runScript(
      this.redis,
      FINISH,
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
    return Number(await runScript(this.redis, CLEAR, keys, args));
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
