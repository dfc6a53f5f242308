-- Moves a held claim's lease on (look-index.ts).
-- KEYS: due.
-- ARGV: batch, token, new token.
-- Returns 1, or 0 when the claim is not held.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
