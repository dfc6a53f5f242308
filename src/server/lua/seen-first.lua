-- Records messageIds not seen yet in today's buckets (webhook-dedupe.ts).
-- KEYS: the days' count keys, today first.
-- ARGV: when today's keys expire (unix s), then per id its digest and hash.
-- Returns one number per id: 1 when it is new (an id given twice is new only the first time).
-- include: ../../redis/lua/day-buckets.lua
local out = {}
local touched = {}
local recorded = 0
for j = 2, #ARGV, 2 do
  local digest, hash = ARGV[j], tonumber(ARGV[j + 1])
  local new = 1
  for d = 1, days do
    -- A day without a count recorded nothing (both are written, and expire, together).
    for k = 1, counts[d] > 0 and level_of(counts[d]) or 0 do
      if new == 0 then break end
      if redis.call('HEXISTS', bucket(d, k, hash), digest) == 1 then new = 0 end
    end
    if new == 0 then break end
  end
  if new == 1 then
    local key = bucket(1, level_of(counts[1]), hash)
    redis.call('HSET', key, digest, '1')
    touched[key] = true
    counts[1] = counts[1] + 1
    recorded = recorded + 1
  end
  out[#out + 1] = new
end
if recorded > 0 then
  redis.call('INCRBY', KEYS[1], recorded)
  redis.call('EXPIREAT', KEYS[1], ARGV[1])
  for key in pairs(touched) do redis.call('EXPIREAT', key, ARGV[1]) end
end
return out
