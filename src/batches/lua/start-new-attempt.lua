-- An operator retry: a new attempt of a failed, canceled, rejected or errored row (RETRYABLE states).
-- Clears everything that belonged to the previous attempt. A row that ended with one of the
-- NEVER_RETRIED codes is refused: its reference paid someone else's payment (a new attempt, with a
-- fresh externalId, would pay it again), or its batch was rejected or expired unapproved (a retry
-- would pay what nobody approved). In a canceled batch the attempt is released from the cancel
-- (`releasedAttempt`, read by fence-send.lua), atomically with its start: an attempt started before
-- the cancel is held (and marked by it), one started after is the operator's new instruction.
-- KEYS: row, counts, totals, the batch's stop hash[, static rows hash].
-- ARGV: expected attempt, now, note, now in ms ('' = no check)[, row key, corrected static JSON,
-- corrected currency, corrected amount].
-- Returns {outcome, state before, new attempt}: outcome is ok | missing | stale | refused | in-doubt
-- (an `error` row whose last request may still reach the service: it may still pay).
-- include: row-history.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', '', ''} end
local cur = redis.call('HGET', KEYS[1], 'state')
local att = redis.call('HGET', KEYS[1], 'attempt')
if ARGV[1] ~= att then return {'stale', cur, att} end
if RETRYABLE[cur] ~= true then return {'refused', cur, att} end
local code = redis.call('HGET', KEYS[1], 'errorCode')
if code and NEVER_RETRIED[code] then return {'refused', cur, att} end
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
