-- Looks up and records rows in one step (duplicate-index.ts claimFor, claimCorrections), so that of
-- two sheets or corrections paying the same money at the same time the later sees the earlier.
-- KEYS: the day the rows are recorded in first, then the window's other days' count keys.
-- ARGV: the window's start (ms), how long the recording day's keys live on (s), the batch id, its
-- time in the index (ms), 1 when a person confirmed possible duplicates (else 0), what a row's own
-- look-up leaves out (`batch`: every row of its batch, a sheet's; `row`: the row itself, a
-- correction's), then per row its field, bucket number, line, and 1 when an earlier row of the same
-- sheet pays the same (else 0).
-- A row is recorded when it is to be paid as it stands: no other row pays the same, or a person
-- confirmed it.
-- Returns per row a list: the other rows' lines for its key, each followed by its batch's time.
-- include: ../../redis/lua/day-buckets.lua
-- include: index-lines.lua
local since, ttl, batch, submitted_ms = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local confirmed = ARGV[5] == '1'
local own = ARGV[6] == 'row' and '^[^\t]*\t[^\t]*\t' or '^[^\t]*\t'
local out = {}
for j = 7, #ARGV, 4 do
  local field, hash, line = ARGV[j], tonumber(ARGV[j + 1]), ARGV[j + 2]
  local found = lines_of(field, hash, since, string.match(line, own))
  out[#out + 1] = found
  if confirmed or (#found == 0 and ARGV[j + 3] == '0') then add_line(field, hash, line) end
end
finish_recording(batch, submitted_ms, ttl)
return out
