-- Clears marks that still have the score they were read with (look-index.ts).
-- KEYS: looks[, hints].
-- ARGV: member, score pairs.
-- Returns how many were cleared.
local cleared = 0
for j = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[j])
  if score and tonumber(score) == tonumber(ARGV[j + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[j])
    if KEYS[2] then redis.call('HDEL', KEYS[2], ARGV[j]) end
    cleared = cleared + 1
  end
end
return cleared
