-- Records rows of one batch in the duplicate index (duplicate-index.ts): each row once, in the buckets
-- of the day the batch was submitted.
-- KEYS: the day's count key.
-- ARGV: how long the day's keys live on (s), the batch id, when it was submitted (ms), then per row
-- its field, bucket number and line.
-- Returns the rows added.
-- include: ../../redis/lua/day-buckets.lua
-- include: index-lines.lua
local ttl, batch, submitted_ms = ARGV[1], ARGV[2], ARGV[3]
for j = 4, #ARGV, 3 do
  add_line(ARGV[j], tonumber(ARGV[j + 1]), ARGV[j + 2])
end
finish_recording(batch, submitted_ms, ttl)
return added
