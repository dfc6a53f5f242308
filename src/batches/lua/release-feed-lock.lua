-- Releases the feed lock, only if the caller still holds it (batch-feeder.ts).
-- KEYS: the feed lock.
-- ARGV: the caller's token.
-- Returns 1 when released, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
