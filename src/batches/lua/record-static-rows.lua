-- Writes the static records of rows that have none yet and appends those rows to the sheet order. A
-- record is written once: a resumed submission or a recovery must never put back the original of a
-- row an operator corrected since.
-- KEYS: rows (hash), order (list).
-- ARGV: row key, record, row key, record, ...
-- Returns how many rows were new.
local fresh = {}
for i = 1, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then
    fresh[#fresh + 1] = ARGV[i]
  end
end
if #fresh > 0 then
  redis.call('RPUSH', KEYS[2], unpack(fresh))
end
return #fresh
