-- The rows the duplicate index (duplicate-index.ts) holds for payment keys, within the window.
-- KEYS: the window's count keys, newest day first.
-- ARGV: the window's start (ms; batches submitted at or before it are left out), then per key its
-- field and bucket number.
-- Returns per key a list: each of its rows' lines followed by its batch's submission time (ms).
-- include: ../../redis/lua/day-buckets.lua
-- include: index-lines.lua
local since = tonumber(ARGV[1])
local out = {}
for j = 2, #ARGV, 2 do
  out[#out + 1] = lines_of(ARGV[j], tonumber(ARGV[j + 1]), since, nil)
end
return out
