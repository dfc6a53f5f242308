-- Holds a batch for approval, once: an existing record is left as it is (approval-store.ts).
-- KEYS: approval, awaiting, unannounced.
-- ARGV: batch id, then field/value pairs of the record.
-- Returns the record's status.
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGET', KEYS[1], 'status') end
local fields = {}
for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], 'status', 'awaiting-approval', unpack(fields))
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[1], 'expiresAtMs'), ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 'awaiting-approval'
