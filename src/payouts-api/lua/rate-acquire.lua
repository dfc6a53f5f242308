-- Takes slots of the shared request rate (shared-rate-limit.ts): as many as wanted, as far as the
-- burst allows (as one by one would), raising the rate by 5% (at least 1/s) after each quiet second.
-- KEYS: the rate's state hash.
-- ARGV: ceiling (requests/s), min, burst ms, slots wanted.
-- Returns {0, slots granted (1 to wanted)} or {ms to wait before asking again, 0}.
-- include: rate-window.lua
local ceiling = tonumber(ARGV[1])
local st = redis.call('HMGET', KEYS[1], 'rate', 'tat', 'pausedUntil', 'changedAt')
local rate = tonumber(st[1]) or ceiling
local tat = tonumber(st[2]) or now
local paused = tonumber(st[3]) or 0
local changed = tonumber(st[4]) or now
if rate > ceiling then rate = ceiling end
if now < paused then return {paused - now, 0} end
if rate < ceiling and now - changed >= 1000 then
  rate = math.min(ceiling, rate + math.max(1, math.ceil(rate * 0.05)))
  changed = now
end
if tat < now then tat = now end
local burst = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'rate', rate, 'changedAt', changed)
redis.call('PEXPIRE', KEYS[1], 3600000)
if tat - now > burst then return {math.ceil(tat - now - burst), 0} end
local want = tonumber(ARGV[4]) or 1
local n = math.max(1, math.min(want, math.floor((now + burst - tat) * rate / 1000) + 1))
redis.call('HSET', KEYS[1], 'tat', tat + n * 1000 / rate)
redis.call('HINCRBY', KEYS[1], 'cnt', n)
return {0, n}
