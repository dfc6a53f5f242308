-- Records rows of one batch in the duplicate index (duplicate-index.ts): each row once, in the buckets
-- of the day the batch was submitted; a row already there (at any level the day reached) is left as
-- it is. A field's value holds one line per row: `<batchId> TAB <rowNumber> TAB <reference>`.
-- KEYS: the day's count key.
-- ARGV: how long the day's keys live on (s), the batch id, when it was submitted (ms), then per row
-- its field, bucket number and line.
-- Returns the rows added.
-- include: ../../redis/lua/day-buckets.lua
local ttl, batch, submitted = ARGV[1], ARGV[2], ARGV[3]
local touched = {}
local added = 0
for j = 4, #ARGV, 3 do
  local field, hash, line = ARGV[j], tonumber(ARGV[j + 1]), ARGV[j + 2]
  local row = '\n' .. string.match(line, '^[^\t]*\t[^\t]*\t')
  local seen = false
  for k = 1, counts[1] > 0 and level_of(counts[1]) or 0 do
    local value = redis.call('HGET', bucket(1, k, hash), field)
    if value and string.find('\n' .. value, row, 1, true) then seen = true break end
  end
  if not seen then
    local key = bucket(1, level_of(counts[1]), hash)
    local value = redis.call('HGET', key, field)
    redis.call('HSET', key, field, value and (value .. '\n' .. line) or line)
    touched[key] = true
    counts[1] = counts[1] + 1
    added = added + 1
  end
end
-- The day's batches and when each was submitted: the window is exact to the millisecond.
local at = string.sub(KEYS[1], 1, -3) .. ':at'
redis.call('HSET', at, batch, submitted)
touched[at] = true
if added > 0 then
  redis.call('INCRBY', KEYS[1], added)
  touched[KEYS[1]] = true
end
-- Never shorten a key's life: a process with a longer window may have set a later one.
for key in pairs(touched) do
  redis.call('EXPIRE', key, ttl, 'GT')
  redis.call('EXPIRE', key, ttl, 'NX')
end
return added
