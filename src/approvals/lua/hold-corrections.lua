-- Holds corrected rows of a batch for approval (a correction round; approval-store.ts): the batch's
-- approval goes back to `awaiting-approval` for them, with no approvals counted. The rows themselves
-- are not touched.
-- KEYS: approval, approvers, awaiting, unannounced, unsettled, corrections.
-- ARGV: batch id, submittedBy, required, requestedAt, expiresAt, expiresAtMs, reasons (JSON), then
-- row key / correction (JSON) pairs.
-- Returns {outcome, round}: held, or why not: unsettled | closed | awaiting-batch.
local approval, approvers, awaiting, unannounced, unsettled, corrections = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id = ARGV[1]
local exists = redis.call('EXISTS', approval) == 1
local status = redis.call('HGET', approval, 'status')
local heldFor = redis.call('HGET', approval, 'heldFor') or 'batch'
local round = tonumber(redis.call('HGET', approval, 'round') or (exists and '1' or '0'))
if exists then
  if redis.call('SISMEMBER', unsettled, id) == 1 then return {'unsettled', round} end
  if heldFor ~= 'correction' and status == 'awaiting-approval' then return {'awaiting-batch', round} end
  if heldFor ~= 'correction' and (status == 'rejected' or status == 'expired') then return {'closed', round} end
end
if not (status == 'awaiting-approval' and heldFor == 'correction') then round = round + 1 end
redis.call('HSET', approval, 'status', 'awaiting-approval', 'batchId', id, 'heldFor', 'correction',
  'round', round, 'submittedBy', ARGV[2], 'required', ARGV[3], 'requestedAt', ARGV[4],
  'expiresAt', ARGV[5], 'expiresAtMs', ARGV[6], 'reasons', ARGV[7])
redis.call('HDEL', approval, 'decidedAt', 'decidedBy', 'reason', 'settledAt')
redis.call('DEL', approvers)
redis.call('ZADD', awaiting, ARGV[6], id)
redis.call('SADD', unannounced, id)
for i = 8, #ARGV, 2 do redis.call('HSET', corrections, ARGV[i], ARGV[i + 1]) end
return {'held', round}
