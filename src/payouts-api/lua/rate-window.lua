-- Redis's clock (`now`, ms) and the shared rate's per-second window (accepted requests this second
-- and the last), kept current; included by the rate limiter's scripts (shared-rate-limit.ts).
-- include: ../../redis/lua/now-ms.lua
local now = now_ms()
local sec = math.floor(now / 1000)
local win = tonumber(redis.call('HGET', KEYS[1], 'win')) or sec
if win ~= sec then
  local cnt = tonumber(redis.call('HGET', KEYS[1], 'cnt')) or 0
  local rej = tonumber(redis.call('HGET', KEYS[1], 'rej')) or 0
  local prev = cnt - rej
  redis.call('HSET', KEYS[1], 'win', sec, 'cnt', 0, 'rej', 0)
  -- What the service accepted in the last second anyone sent (a second spent paused says nothing).
  if prev > 0 then redis.call('HSET', KEYS[1], 'lastOk', prev) end
end
