-- Ends a held claim (look-index.ts). With a retry score the batch is due again from it (a look that
-- failed); else it is due from its earliest remaining mark, or leaves `due` when it has none.
-- KEYS: due, the batch's looks.
-- ARGV: batch, token, retry score ('' = none).
-- Returns 1, or 0 when the claim was not held.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #first == 0 then redis.call('ZREM', KEYS[1], ARGV[1]) else redis.call('ZADD', KEYS[1], first[2], ARGV[1]) end
return 1
