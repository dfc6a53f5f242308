-- Marks rows whose payment needs a look (look-index.ts). A mark's score is now (minus the backdate),
-- or one more than its previous score if that is not older; a hint replaces the stored one unless
-- that one announced a later change.
-- KEYS: due, loose, then (looks, hints) per batch.
-- ARGV: number of batches n, their ids, backdate ms (a mark that is due at once: the sweep's), then
-- triples (batch number 1..n or 0 for a loose payment id, member, hint or '').
-- Returns 1.
-- include: ../../redis/lua/now-ms.lua
local now = now_ms()
local n = tonumber(ARGV[1])
local at = now - tonumber(ARGV[n + 2])
local function occurred(hint)
  local a = string.find(hint, '|', 1, true)
  local b = a and string.find(hint, '|', a + 1, true)
  return b and tonumber(string.sub(hint, a + 1, b - 1)) or 0
end
local function mark(zset, member)
  local old = redis.call('ZSCORE', zset, member)
  local score = at
  if old and tonumber(old) >= score then score = tonumber(old) + 1 end
  redis.call('ZADD', zset, score, member)
  return score
end
-- Each batch's earliest mark of this call, listed among the due batches once at the end.
local listed = {}
for j = n + 3, #ARGV, 3 do
  local b, member, hint = tonumber(ARGV[j]), ARGV[j + 1], ARGV[j + 2]
  if b == 0 then
    local score = mark(KEYS[2], member)
    redis.call('ZADD', KEYS[1], 'NX', score, LOOSE_BATCH)
  else
    local score = mark(KEYS[1 + 2 * b], member)
    if hint ~= '' then
      local prev = redis.call('HGET', KEYS[2 + 2 * b], member)
      if not prev or occurred(prev) <= occurred(hint) then redis.call('HSET', KEYS[2 + 2 * b], member, hint) end
    end
    if not listed[b] or score < listed[b] then listed[b] = score end
  end
end
for b, score in pairs(listed) do redis.call('ZADD', KEYS[1], 'NX', score, ARGV[1 + b]) end
return 1
