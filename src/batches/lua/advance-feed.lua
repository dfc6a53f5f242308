-- Moves a feed's cursor from what the caller read to past the rows it handed over (batch-feeder.ts),
-- only if nobody moved or restarted the feed meanwhile (compare-and-set on cursor and epoch).
-- KEYS: the batch's feed hash.
-- ARGV: cursor read, epoch read, new cursor.
-- Returns 1, or 0 when the feed changed.
local f = redis.call('HMGET', KEYS[1], 'cursor', 'epoch')
if f[1] ~= ARGV[1] or (f[2] or '0') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'cursor', ARGV[3])
return 1
