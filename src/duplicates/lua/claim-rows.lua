-- Looks up and records, in one step, the rows of a sheet about to become a batch (duplicate-index.ts
-- claimFor): of two sheets paying the same money taken at once, the later sees the earlier's rows.
-- KEYS: the window's count keys, newest day (today, the day the rows are recorded in) first.
-- ARGV: the window's start (ms), how long today's keys live on (s), the batch id, the claim's time
-- (ms), 1 when a person confirmed possible duplicates (else 0), then per row its field, bucket
-- number, line, and 1 when an earlier row of the sheet pays the same (else 0).
-- A row is recorded when it is to be paid as it stands: no other row pays the same, or a person
-- confirmed it.
-- Returns per row a list: the other batches' lines for its key, each followed by its batch's time.
-- include: ../../redis/lua/day-buckets.lua
-- include: index-lines.lua
local since, ttl, batch, submitted_ms = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local confirmed = ARGV[5] == '1'
local out = {}
for j = 6, #ARGV, 4 do
  local field, hash = ARGV[j], tonumber(ARGV[j + 1])
  local found = lines_of(field, hash, since, batch)
  out[#out + 1] = found
  if confirmed or (#found == 0 and ARGV[j + 3] == '0') then add_line(field, hash, ARGV[j + 2]) end
end
finish_recording(batch, submitted_ms, ttl)
return out
