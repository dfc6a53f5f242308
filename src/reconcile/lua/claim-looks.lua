-- Claims up to ARGV[3] batches whose earliest mark is at least the quiet time old, or, for a batch
-- with no row left to send (its counts' `queued` is 0), the shorter draining quiet time
-- (look-index.ts).
-- KEYS: due.
-- ARGV: quiet ms, lease ms, max, draining quiet ms, the key prefix of batches (`<p>:batch:`; a
-- batch's counts are `<prefix><id>:counts`, in the slot of the prefix's hash tag).
-- Returns {now, id1, token1, draining1, ...}.
-- include: ../../redis/lua/now-ms.lua
local now = now_ms()
local max = tonumber(ARGV[3])
local quiet_before = now - tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]), 'WITHSCORES', 'LIMIT', 0, max + 100)
local out = {tostring(now)}
local token = now + tonumber(ARGV[2])
local claimed = 0
for j = 1, #ids, 2 do
  if claimed >= max then break end
  local id, score = ids[j], tonumber(ids[j + 1])
  local draining = false
  if id ~= LOOSE_BATCH then
    local queued = redis.call('HGET', ARGV[5] .. id .. ':counts', 'queued')
    draining = (not queued) or tonumber(queued) <= 0
  end
  if score <= quiet_before or draining then
    redis.call('ZADD', KEYS[1], token, id)
    out[#out + 1] = id
    out[#out + 1] = tostring(token)
    out[#out + 1] = draining and '1' or '0'
    claimed = claimed + 1
  end
end
return out
