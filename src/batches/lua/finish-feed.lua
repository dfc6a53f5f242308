-- Takes a batch off the feeding list, only if its feed is still where the caller found its end
-- (batch-feeder.ts).
-- KEYS: the batch's feed hash, the feeding set.
-- ARGV: cursor read, epoch read, batch id.
-- Returns 1, or 0 when the feed changed.
local f = redis.call('HMGET', KEYS[1], 'cursor', 'epoch')
if f[1] ~= ARGV[1] or (f[2] or '0') ~= ARGV[2] then return 0 end
redis.call('SREM', KEYS[2], ARGV[3])
return 1
