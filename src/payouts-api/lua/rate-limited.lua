-- The service answered 429 (shared-rate-limit.ts): halves the rate, or brings it down to what the
-- service accepted in the last full second sending if that is lower (at most once a second), and
-- pauses everybody until the retry-after.
-- KEYS: the rate's state hash.
-- ARGV: ceiling, min, retry-after ms.
-- Returns the new rate.
-- include: rate-window.lua
local ceiling = tonumber(ARGV[1])
local minRate = tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[1], 'rate', 'decreasedAt', 'pausedUntil', 'lastOk', 'tat')
local rate = tonumber(st[1]) or ceiling
local decreased = tonumber(st[2]) or 0
local paused = tonumber(st[3]) or 0
local lastOk = tonumber(st[4]) or 0
local tat = tonumber(st[5]) or now
redis.call('HINCRBY', KEYS[1], 'rej', 1)
if now - decreased >= 1000 then
  local next = math.floor(rate / 2)
  if lastOk > 0 and lastOk < next then next = lastOk end
  rate = math.max(minRate, next)
  redis.call('HSET', KEYS[1], 'rate', rate, 'decreasedAt', now, 'changedAt', now)
end
local untilMs = now + tonumber(ARGV[3])
if untilMs > paused then redis.call('HSET', KEYS[1], 'pausedUntil', untilMs) end
if tat < untilMs then redis.call('HSET', KEYS[1], 'tat', untilMs) end
redis.call('PEXPIRE', KEYS[1], 3600000)
return rate
