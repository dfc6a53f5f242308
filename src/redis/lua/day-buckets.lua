-- Day buckets (src/redis/day-buckets.ts), included by the scripts that keep their fields in them (the
-- webhook receiver's messageIds, the duplicate index): KEYS are the days' count keys, newest first; a
-- bucket's key is its day's count key less `:n`, then `:<level>:<bucket>`. LEVEL_BUCKETS and
-- BUCKET_FILL come from day-buckets.ts (DAY_BUCKET_CONSTANTS).
local days = #KEYS
local function level_of(count)
  for k = 1, #LEVEL_BUCKETS do
    if count < LEVEL_BUCKETS[k] * BUCKET_FILL then return k end
  end
  return #LEVEL_BUCKETS
end
local function bucket(d, k, hash)
  return string.sub(KEYS[d], 1, -3) .. ':' .. (k - 1) .. ':' .. string.format('%d', hash % LEVEL_BUCKETS[k])
end
-- One MGET for the days' counts (most days of the window have none: nil reads as 0).
local counts = {}
local stored = redis.call('MGET', unpack(KEYS))
for d = 1, days do counts[d] = tonumber(stored[d] or '0') end
