-- The shared head of the decision scripts (approve.lua, reject.lua, expire.lua), included by them.
-- KEYS: approval, approvers, awaiting, unsettled, unannounced, batch.
-- ARGV: batch id, now (ISO), now (ms), then the script's own.
-- `answer` is what every decision returns: {outcome, status after, approvals counted, approvals
-- required}; `decide` records a decision; `common_checks` answers why a decision cannot be taken now
-- (expiring the batch when it is past due), or nil.
local approval, approvers, awaiting, unsettled, unannounced, batch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, now, now_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local function answer(outcome)
  return {outcome, redis.call('HGET', approval, 'status') or '', redis.call('HLEN', approvers),
    tonumber(redis.call('HGET', approval, 'required') or '0')}
end
local function decide(status, by)
  redis.call('HSET', approval, 'status', status, 'decidedAt', now)
  if by then redis.call('HSET', approval, 'decidedBy', by) end
  redis.call('ZREM', awaiting, id)
  redis.call('SREM', unannounced, id)
  redis.call('SADD', unsettled, id)
end
if redis.call('EXISTS', approval) == 0 then return {'missing', '', 0, 0} end
local status = redis.call('HGET', approval, 'status')
local function common_checks()
  if status ~= 'awaiting-approval' then return 'not-awaiting' end
  -- Decided only once every row is recorded: the follow-up then covers every row of the batch.
  if redis.call('HGET', batch, 'rowsRecorded') ~= '1' then return 'not-ready' end
  if now_ms >= tonumber(redis.call('HGET', approval, 'expiresAtMs')) then
    decide('expired', false)
    return 'expired'
  end
  return nil
end
