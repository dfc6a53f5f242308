-- The send fence: checked atomically right before a POST /payments goes out. The run may send only
-- while the row is still `queued` without a payment, on the attempt and requote generation the run
-- built its body for, with the body hash on record that the run computed (when one is recorded), and
-- while the run still holds its job's lock (a stalled run whose job another worker took has lost it).
-- On success the send time is recorded (`lastSentAt`, ms) with the time until which the request may
-- still reach the service (`inDoubtUntil`: the send time plus the sender's request time-outs and a
-- margin); an operator retry of an `error` row waits until then.
--
-- `paused`: the batch is paused or canceled (src/batch-control) and this attempt was never sent. An
-- attempt already sent once (`sentAttempt`) may send again under its key: it is in flight, and only
-- its own key can tell whether it paid. An attempt an operator started after the batch was canceled
-- (`releasedAttempt`, start-new-attempt.lua) is not held by the cancel: it is a new instruction that
-- passed the gate, and a canceled batch is never resumed.
--
-- KEYS: row, the batch's stop hash[, job lock].
-- ARGV: attempt, generation, body hash ('' = none recorded for this body), now (ms), in doubt until
-- (ms)[, lock token].
-- Returns {outcome, state, attempt}: ok | missing | stale | done | requoted | body-changed | paused |
-- lock-lost.
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
