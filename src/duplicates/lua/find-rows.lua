-- The rows the duplicate index (duplicate-index.ts) holds for payment keys, within the window.
-- KEYS: the window's count keys, newest day first.
-- ARGV: the window's start (ms; batches submitted at or before it are left out), then per key its
-- field and bucket number.
-- Returns per key a list: each of its rows' lines followed by its batch's submission time (ms).
-- include: ../../redis/lua/day-buckets.lua
local since = tonumber(ARGV[1])
local submitted = {}
local function submitted_at(d, batch)
  local at = string.sub(KEYS[d], 1, -3) .. ':at'
  local known = submitted[at .. '\t' .. batch]
  if known == nil then
    known = redis.call('HGET', at, batch) or false
    submitted[at .. '\t' .. batch] = known
  end
  return known
end
local out = {}
for j = 2, #ARGV, 2 do
  local field, hash = ARGV[j], tonumber(ARGV[j + 1])
  local found = {}
  for d = 1, #KEYS do
    for k = 1, counts[d] > 0 and level_of(counts[d]) or 0 do
      local value = redis.call('HGET', bucket(d, k, hash), field)
      if value then
        for line in string.gmatch(value, '[^\n]+') do
          local at = submitted_at(d, string.match(line, '^[^\t]*'))
          if at and tonumber(at) > since then
            found[#found + 1] = line
            found[#found + 1] = at
          end
        end
      end
    end
  end
  out[#out + 1] = found
end
return out
