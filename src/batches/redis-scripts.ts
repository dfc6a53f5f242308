/**
 * The Lua scripts that change a row, so that every change is atomic: the state check, the new fields,
 * the per-state counters, the money totals and the history line move together or not at all. The
 * scripts never decode JSON (Lua's cjson rounds numbers and turns empty arrays into objects); values
 * arrive ready-encoded from TypeScript.
 */
import { createHash } from "node:crypto";
import type { RedisClient } from "../redis/index.js";
import { REFERENCE_REUSED } from "./adopt-payment.js";
import { RECORDED_NOTE_CODE } from "./row-fields.js";
import {
  luaAdoptableFromErrorTable,
  luaFollowTable,
  luaGiveUpTable,
  luaRankTable,
  RETRYABLE_ROW_STATES,
} from "./row-state.js";

export interface LuaScript {
  name: string;
  source: string;
  sha: string;
}

function script(name: string, source: string): LuaScript {
  return { name, source, sha: createHash("sha1").update(source).digest("hex") };
}

/** A Lua script for {@link runScript}, for other modules' scripts. */
export const defineLuaScript = script;

/**
 * A row's history: one compact line per change, `<at> <from|-> <to> <attempt> <note as JSON>` (about
 * half the bytes of a JSON object per line; `at`, like the row's `updatedAt`, is batch-store.ts's
 * rowStamp, base-36 milliseconds; the note, last, may hold spaces; a mark may stand in it for the
 * row's payment id, row-fields.ts), and only the latest HISTORY_MAX lines are kept, so a row's
 * record stays small however often it is retried. batch-store.ts's parseHistory reads these lines.
 */
export const HISTORY_MAX = 20;
const HISTORY_LINE = `
local function history_line(now, from, to, attempt, note)
  return now .. ' ' .. (from or '-') .. ' ' .. to .. ' ' .. attempt .. ' ' .. note .. '\\n'
end
-- The history with a line added, keeping only the latest HISTORY_MAX lines.
local function with_line(h, line)
  h = h .. line
  local _, n = string.gsub(h, '\\n', '')
  while n > ${HISTORY_MAX} do
    h = string.sub(h, string.find(h, '\\n', 1, true) + 1)
    n = n - 1
  end
  return h
end
local function append_history(key, line)
  redis.call('HSET', key, 'history', with_line(redis.call('HGET', key, 'history') or '', line))
end
-- Puts the payment id a row is about to lose back into the history notes that hold its mark
-- (row-fields.ts PAYMENT_ID_MARK, byte 1), so the mark always stands for the row's current payment.
-- The id goes in as JSON string content (a note is JSON text): a quote or backslash stays escaped.
-- Returns the history unchanged when it holds no mark.
local function with_payment_id(h, payment_id)
  if not string.find(h, '\\1', 1, true) then return h end
  local json = string.sub(cjson.encode(payment_id), 2, -2)
  return (string.gsub(h, '\\1', (string.gsub(json, '%%', '%%%%'))))
end
local function expand_payment_mark(key, payment_id)
  local h = redis.call('HGET', key, 'history')
  if h then
    local expanded = with_payment_id(h, payment_id)
    if expanded ~= h then redis.call('HSET', key, 'history', expanded) end
  end
end
`;

/**
 * Milliseconds of a time as a row stores it: a base-36 stamp (row-fields.ts encodePaymentTime). nil
 * for a time kept as text (one that does not read back the same as a stamp), which compares as text.
 */
const TIME_MS = `
local function time_ms(v)
  if not string.find(v, '[-:]') then return tonumber(v, 36) end
  return nil
end
`;

/**
 * The batch's index of open rows (redis-layout.ts `open`): a row with a payment that is not final yet,
 * scored by its last touch (Redis time, ms), so the sweep reads only the rows gone quiet. Kept by the
 * script that moves rows, atomically with the move. The member is the row key (what follows the last
 * `:row:` of the row's hash key: row keys never contain a `:`).
 */
const OPEN_INDEX_UPDATE = `
if KEYS[4] then
  local member = string.match(KEYS[1], '.*:row:(.*)$')
  if rank[to] == 3 or not payment_now then
    redis.call('ZREM', KEYS[4], member)
  else
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[4], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), member)
  end
end`;

/**
 * Records rows that are not recorded yet (a resumed submission never resets a row that moved on).
 * KEYS: counts, totals, row hash 1..n. ARGV: now, then per row: currency, amount, attempt (1, or the
 * attempt of an operator's correction when a batch is rebuilt from its archive). Returns rows created.
 */
export const INIT_ROWS = script(
  "initRows",
  `${HISTORY_LINE}
local now = ARGV[1]
local created = 0
for i = 3, #KEYS do
  local key = KEYS[i]
  if redis.call('EXISTS', key) == 0 then
    local currency = ARGV[2 + (i - 3) * 3]
    local amount = ARGV[3 + (i - 3) * 3]
    local attempt = ARGV[4 + (i - 3) * 3]
    redis.call('HSET', key, 'state', 'queued', 'attempt', attempt, 'requoteGeneration', '0',
      'currency', currency, 'amount', amount, 'updatedAt', now,
      'history', history_line(now, nil, 'queued', attempt, '${RECORDED_NOTE_CODE}'))
    redis.call('HINCRBY', KEYS[1], 'queued', 1)
    redis.call('HINCRBY', KEYS[2], 'queued|' .. currency, tonumber(amount))
    created = created + 1
  end
end
return created
`,
);

/**
 * The fields only a row's sends use (the send fence, the stored quote and body, the in-doubt window of
 * an `error` row's retry): dropped once the row reaches a terminal payment state (`completed`,
 * `failed`, `canceled`) with its payment recorded. No send of that attempt can happen any more (the
 * fence needs `queued`), only an `error` row's retry reads the in-doubt window, and a retry of a
 * failed or canceled row starts the next attempt, whose sends store their own.
 */
export const SEND_ONLY_FIELDS = [
  "quote",
  "sentBodyHash",
  "sentGeneration",
  "lastSentAt",
  "inDoubtUntil",
  "sentAttempt",
  "releasedAttempt",
] as const;

/**
 * Changes a row: optionally its state (forward only, or following its own payment between final
 * states: row-state.ts canFollowPayment), and fields. An empty field value deletes it.
 * KEYS: row, counts, totals[, open index[, payments created per second]]. ARGV: expected attempt
 * ('' = any), target state ('' = keep), now, note (JSON string or 'null'), number of conditions n,
 * then n pairs (field, value the caller read; '' = the field was absent), then field/value pairs to
 * write.
 * Returns {outcome, state before, attempt}: outcome is ok | missing | stale | terminal | refused |
 * outdated (the `paymentUpdatedAt` field, when given, is older than the stored one) | changed (a
 * condition field no longer holds what the caller read: another run wrote it meanwhile).
 *
 * A row in a final payment state follows its payment to another one only when the change names the
 * row's own payment (`paymentId`) and carries a `paymentUpdatedAt` newer than the stored one: the
 * service's newest word wins, an older or equal snapshot never moves a final row.
 *
 * The batch's count of payments created per second (redis-layout.ts `createdPerSecond`, what the
 * reconciler sizes its page reads by) counts a row's payment once, when a change first records its
 * `paymentCreatedAt`.
 */
export const TRANSITION_ROW = script(
  "transitionRow",
  `${HISTORY_LINE}${TIME_MS}
local rank = ${luaRankTable()}
local adoptable = ${luaAdoptableFromErrorTable()}
local giveUp = ${luaGiveUpTable()}
local follow = ${luaFollowTable()}
local paymentFinal = {completed=true, failed=true, canceled=true, returned=true}
local sendOnly = {${SEND_ONLY_FIELDS.map((f) => `'${f}'`).join(", ")}}
-- What the change needs of the row, in one read (its history only when that is rewritten).
local row = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'paymentId', 'paymentUpdatedAt', 'currency',
  'amount', 'paymentCreatedAt', 'requoteGeneration')
local cur, att = row[1], row[2]
if not cur then return {'missing', '', ''} end
if ARGV[1] ~= '' and ARGV[1] ~= att then return {'stale', cur, att} end
local conditions = tonumber(ARGV[5])
for i = 6, 5 + conditions * 2, 2 do
  -- An absent requote generation is 0 (a finished row drops a '0': below), as FENCE_SEND reads it.
  local now_value = redis.call('HGET', KEYS[1], ARGV[i]) or (ARGV[i] == 'requoteGeneration' and '0' or '')
  if now_value ~= ARGV[i + 1] then return {'changed', cur, att} end
end
local first = 6 + conditions * 2
-- A payment snapshot older than the one already applied changes nothing. Times compare by their
-- milliseconds (stamps), else as text. \`newer\`: the change
-- carries a snapshot strictly newer than the stored one (or the row stores none); \`same\`: it names
-- the row's own payment. Both are needed for a final row to follow its payment.
local newer, same = false, false
local stored_payment, seen = row[3], row[4]
for i = first, #ARGV, 2 do
  if ARGV[i] == 'paymentUpdatedAt' and ARGV[i + 1] ~= '' then
    if seen then
      local given_ms, seen_ms = time_ms(ARGV[i + 1]), time_ms(seen)
      local older
      if given_ms and seen_ms then
        older = given_ms < seen_ms
        newer = given_ms > seen_ms
      else
        older = ARGV[i + 1] < seen
        newer = ARGV[i + 1] > seen
      end
      if older then return {'outdated', cur, att} end
    else
      newer = true
    end
  elseif ARGV[i] == 'paymentId' then
    same = stored_payment ~= false and stored_payment == ARGV[i + 1]
  end
end
local to = ARGV[2]
local now = ARGV[3]
local note = ARGV[4]
local changes = (to ~= '' and to ~= cur)
if not changes then
  if rank[cur] == 3 then return {'terminal', cur, att} end
  to = cur
else
  local allowed
  if cur == 'error' then allowed = adoptable[to] == true
  elseif giveUp[to] then allowed = cur == 'queued'
  elseif follow[cur] then allowed = follow[cur][to] == true and newer and same
  elseif to == 'returned' then allowed = false
  else allowed = rank[to] ~= nil and rank[to] > rank[cur] end
  if not allowed then return {'refused', cur, att} end
end
-- The writes, gathered: one HSET and at most one HDEL for the whole change.
local sets, dels = {}, {}
local history, history_changed = nil, false
local payment_now, generation = stored_payment, row[8]
for i = first, #ARGV, 2 do
  local field, value = ARGV[i], ARGV[i + 1]
  if field == 'paymentId' then
    if stored_payment and stored_payment ~= value then
      history = history or redis.call('HGET', KEYS[1], 'history') or ''
      local expanded = with_payment_id(history, stored_payment)
      if expanded ~= history then history, history_changed = expanded, true end
    end
    payment_now = value ~= '' and value or false
  elseif field == 'paymentCreatedAt' and KEYS[5] and value ~= '' then
    -- Counted once per payment: when the row first records this creation time.
    if row[7] ~= value then
      local ms = time_ms(value)
      if ms then redis.call('HINCRBY', KEYS[5], tostring(math.floor(ms / 1000)), 1) end
    end
  elseif field == 'fees' then
    -- Fees in the row's own currency need not say it (row-fields.ts).
    local currency = row[5]
    if currency and string.sub(value, 1, #currency + 1) == currency .. '|' then
      value = string.sub(value, #currency + 2)
    end
  elseif field == 'requoteGeneration' then
    generation = value ~= '' and value or false
  end
  if value == '' then
    dels[#dels + 1] = field
  else
    sets[#sets + 1] = field
    sets[#sets + 1] = value
  end
end
sets[#sets + 1] = 'updatedAt'
sets[#sets + 1] = now
if changes then
  sets[#sets + 1] = 'state'
  sets[#sets + 1] = to
  local currency = row[5]
  local amount = tonumber(row[6])
  redis.call('HINCRBY', KEYS[2], cur, -1)
  redis.call('HINCRBY', KEYS[2], to, 1)
  redis.call('HINCRBY', KEYS[3], cur .. '|' .. currency, -amount)
  redis.call('HINCRBY', KEYS[3], to .. '|' .. currency, amount)
end
if changes or note ~= 'null' then
  history = with_line(history or redis.call('HGET', KEYS[1], 'history') or '', history_line(now, cur, to, att, note))
  history_changed = true
end
if history_changed then
  sets[#sets + 1] = 'history'
  sets[#sets + 1] = history
end
redis.call('HSET', KEYS[1], unpack(sets))
-- A row whose payment reached a terminal state never sends again, and only an \`error\` row's retry
-- asks when its last request was sent: what the sends needed is dropped (Redis per row).
if changes and paymentFinal[to] and payment_now then
  for _, f in ipairs(sendOnly) do dels[#dels + 1] = f end
  -- Readers take an absent generation for 0 (batch-store.ts rowFrom, the scripts here); any other
  -- generation stays, as the row's Idempotency-Key shown in its result is derived from it.
  if generation == '0' then dels[#dels + 1] = 'requoteGeneration' end
end
if #dels > 0 then redis.call('HDEL', KEYS[1], unpack(dels)) end
${OPEN_INDEX_UPDATE}
return {'ok', cur, att}
`,
);

/**
 * The send fence: checked atomically right before a POST /payments goes out. The
 * run may send only while the row is still `queued` without a payment, on the attempt and requote
 * generation the run built its body for, with the body hash on record that the run computed (when one
 * is recorded), and while the run still holds its job's lock (a stalled run whose job another worker
 * took has lost it). On success the send time is recorded (`lastSentAt`, ms) with the time until
 * which the request may still reach the service (`inDoubtUntil`: the send time plus the sender's
 * request time-outs and a margin); an operator retry of an `error` row waits until then.
 * KEYS: row, the batch's stop hash[, job lock]. ARGV: attempt, generation, body hash ('' = none recorded
 * for this body), now (ms), in doubt until (ms)[, lock token]. Returns {outcome, state, attempt}: ok |
 * missing | stale | done | requoted | body-changed | paused | lock-lost.
 *
 * `paused`: the batch is paused or canceled (src/batch-control) and this attempt was never sent. An
 * attempt already sent once (`sentAttempt`) may send again under its key: it is in flight, and only
 * its own key can tell whether it paid. An attempt an operator started after the batch was canceled
 * (`releasedAttempt`, START_NEW_ATTEMPT) is not held by the cancel: it is a new instruction that
 * passed the gate, and a canceled batch is never resumed.
 */
export const FENCE_SEND = script(
  "fenceSend",
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', '', ''} end
local row = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'paymentId', 'requoteGeneration', 'sentBodyHash', 'sentGeneration', 'sentAttempt', 'releasedAttempt')
local cur, att = row[1], row[2]
if att ~= ARGV[1] then return {'stale', cur, att} end
if cur ~= 'queued' or row[3] then return {'done', cur, att} end
if (row[4] or '0') ~= ARGV[2] then return {'requoted', cur, att} end
if ARGV[3] ~= '' and (row[5] ~= ARGV[3] or row[6] ~= ARGV[2]) then return {'body-changed', cur, att} end
if row[7] ~= ARGV[1] and row[8] ~= ARGV[1] and redis.call('HEXISTS', KEYS[2], 'paused') == 1 then return {'paused', cur, att} end
if KEYS[3] and redis.call('GET', KEYS[3]) ~= ARGV[6] then return {'lock-lost', cur, att} end
redis.call('HSET', KEYS[1], 'lastSentAt', ARGV[4], 'inDoubtUntil', ARGV[5], 'sentAttempt', ARGV[1])
return {'ok', cur, att}
`,
);

const RETRYABLE_LUA = `{${RETRYABLE_ROW_STATES.map((s) => `["${s}"]=true`).join(",")}}`;

/**
 * An operator retry: a new attempt of a failed, canceled, rejected or errored row. Clears everything
 * that belonged to the previous attempt. In a canceled batch the attempt is released from the cancel
 * (`releasedAttempt`, read by FENCE_SEND), atomically with its start: an attempt started before the
 * cancel is held (and marked by it), one started after is the operator's new instruction.
 * KEYS: row, counts, totals, the batch's stop hash[, static rows hash]. ARGV: expected
 * attempt, now, note, now in ms ('' = no check)[, row key, corrected static JSON, corrected
 * currency, corrected amount].
 * Returns {outcome, state before, new attempt}: outcome is ok | missing | stale | refused | in-doubt
 * (an `error` row whose last request may still reach the service: it may still pay).
 */
export const START_NEW_ATTEMPT = script(
  "startNewAttempt",
  `${HISTORY_LINE}
local retryable = ${RETRYABLE_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', '', ''} end
local cur = redis.call('HGET', KEYS[1], 'state')
local att = redis.call('HGET', KEYS[1], 'attempt')
if ARGV[1] ~= att then return {'stale', cur, att} end
if retryable[cur] ~= true then return {'refused', cur, att} end
-- A reference already used by someone else's payment: a new attempt (a fresh externalId) would pay it again.
if redis.call('HGET', KEYS[1], 'errorCode') == '${REFERENCE_REUSED}' then return {'refused', cur, att} end
-- Canceled because its batch was rejected or expired unapproved: a retry would pay what nobody approved.
local code = redis.call('HGET', KEYS[1], 'errorCode')
if code == 'APPROVAL_REJECTED' or code == 'APPROVAL_EXPIRED' then return {'refused', cur, att} end
if cur == 'error' and ARGV[4] ~= '' then
  local until_ms = redis.call('HGET', KEYS[1], 'inDoubtUntil')
  if until_ms and tonumber(until_ms) > tonumber(ARGV[4]) then return {'in-doubt', cur, att} end
end
local next = tostring(tonumber(att) + 1)
local now = ARGV[2]
local oldCurrency = redis.call('HGET', KEYS[1], 'currency')
local oldAmount = tonumber(redis.call('HGET', KEYS[1], 'amount'))
local currency, amount = oldCurrency, oldAmount
local had = redis.call('HGET', KEYS[1], 'paymentId')
if had then expand_payment_mark(KEYS[1], had) end
redis.call('HDEL', KEYS[1], 'paymentId', 'paymentStatus', 'debitUsd', 'fxRate', 'quote', 'sentBodyHash',
  'sentGeneration', 'sentAttempt', 'releasedAttempt', 'errorCode', 'errorMessage', 'fees', 'paymentUpdatedAt')
redis.call('HSET', KEYS[1], 'state', 'queued', 'attempt', next, 'requoteGeneration', '0', 'updatedAt', now)
if redis.call('HEXISTS', KEYS[4], 'canceled') == 1 then redis.call('HSET', KEYS[1], 'releasedAttempt', next) end
if #ARGV >= 8 then
  -- An operator's correction: the row's static record and the amount its totals count are replaced.
  currency, amount = ARGV[7], tonumber(ARGV[8])
  redis.call('HSET', KEYS[1], 'currency', currency, 'amount', ARGV[8])
  redis.call('HSET', KEYS[5], ARGV[5], ARGV[6])
end
redis.call('HINCRBY', KEYS[2], cur, -1)
redis.call('HINCRBY', KEYS[2], 'queued', 1)
redis.call('HINCRBY', KEYS[3], cur .. '|' .. oldCurrency, -oldAmount)
redis.call('HINCRBY', KEYS[3], 'queued|' .. currency, amount)
append_history(KEYS[1], history_line(now, cur, 'queued', next, ARGV[3]))
return {'ok', cur, next}
`,
);

/** Runs a script by its SHA, loading it on the first NOSCRIPT (after a restart or a SCRIPT FLUSH). */
export async function runScript(
  redis: RedisClient,
  lua: LuaScript,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(lua.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.includes("NOSCRIPT")) {
      return redis.eval(lua.source, keys.length, ...keys, ...args);
    }
    throw err;
  }
}
