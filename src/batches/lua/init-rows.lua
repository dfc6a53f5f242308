-- Records rows that are not recorded yet (a resumed submission never resets a row that moved on).
-- KEYS: counts, totals, row hash 1..n.
-- ARGV: now, then per row: currency, amount, attempt (1, or the attempt of an operator's correction
-- when a batch is rebuilt from its archive).
-- Returns how many rows it created.
-- include: row-history.lua
local now = ARGV[1]
local created = 0
for i = 3, #KEYS do
  local key = KEYS[i]
  if redis.call('EXISTS', key) == 0 then
    local currency = ARGV[2 + (i - 3) * 3]
    local amount = ARGV[3 + (i - 3) * 3]
    local attempt = ARGV[4 + (i - 3) * 3]
    redis.call('HSET', key, 'state', 'queued', 'attempt', attempt, 'requoteGeneration', '0',
      'currency', currency, 'amount', amount, 'updatedAt', now,
      'history', history_line(now, nil, 'queued', attempt, RECORDED_NOTE_CODE))
    redis.call('HINCRBY', KEYS[1], 'queued', 1)
    redis.call('HINCRBY', KEYS[2], 'queued|' .. currency, tonumber(amount))
    created = created + 1
  end
end
return created
