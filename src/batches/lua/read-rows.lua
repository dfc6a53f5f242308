-- Reads the same fields of many rows in one call: one reply for a chunk of rows instead of a command
-- (and its reply) per row, which is what a client pays most for when a result file or a reconcile
-- look reads every row of a batch. Read-only.
-- KEYS: the rows hash (static records), read only when ARGV[2] is '1'.
-- ARGV: row key prefix (`<p>:batch:<id>:row:`), '1' to read each row's static record too, the number
-- of fields F, the F field names, then the row keys.
-- Returns, per row in the order given, its static record (when asked) then its F values; a missing
-- record or field is nil.
local prefix = ARGV[1]
local with_static = ARGV[2] == '1'
local f = tonumber(ARGV[3])
local fields = {}
for j = 1, f do fields[j] = ARGV[3 + j] end
local first = 4 + f
local out = {}
local n = 0
local statics
if with_static and #ARGV >= first then
  statics = redis.call('HMGET', KEYS[1], unpack(ARGV, first, #ARGV))
end
for i = first, #ARGV do
  if statics then
    n = n + 1
    out[n] = statics[i - first + 1]
  end
  local values = redis.call('HMGET', prefix .. ARGV[i], unpack(fields))
  for j = 1, f do out[n + j] = values[j] end
  n = n + f
end
return out
