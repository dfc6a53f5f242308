-- Forgets messageIds wherever these days' buckets may hold them (webhook-dedupe.ts).
-- KEYS: the days' count keys, today first.
-- ARGV: digest, hash pairs.
-- Returns how many fields it removed.
-- include: ../../redis/lua/day-buckets.lua
local removed = 0
for j = 1, #ARGV, 2 do
  for d = 1, days do
    for k = 1, counts[d] > 0 and level_of(counts[d]) or 0 do
      removed = removed + redis.call('HDEL', bucket(d, k, tonumber(ARGV[j + 1])), ARGV[j])
    end
  end
end
return removed
