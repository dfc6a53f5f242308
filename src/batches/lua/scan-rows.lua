-- One run of a filtered walk through a batch's rows (row-scan.ts): from a position, a chunk at a
-- time, until the page is full or the budget of rows is spent. Read-only.
-- Modes: 'list' walks the order list (sheet order), 'invalid' the invalid rows' index (a zset by row
-- number), 'hash' HSCANs the rows hash (a batch without a complete order list).
-- KEYS: the order list or the invalid index (what the mode walks), the rows hash, the invalid hash.
-- ARGV: mode, row key prefix (`<p>:batch:<id>:row:`), position (list index, or HSCAN cursor), entries
-- of that HSCAN chunk handed out already, budget (rows to look at), limit (matches wanted), states
-- (',a,b,' or ''), search text (lower case, or ''), amounts (',CUR:minor,...' or ''), payee ids
-- (space-separated, or '').
-- Returns {next position (-1: the end), next skip, rows looked at, row key...}.
local mode = ARGV[1]
local row_prefix = ARGV[2]
local pos = ARGV[3]
local skip = tonumber(ARGV[4])
local budget = tonumber(ARGV[5])
local limit = tonumber(ARGV[6])
local states = ARGV[7]
local needle = ARGV[8]
local amounts = ARGV[9]
local payees = ARGV[10]
local CHUNK = 250
local found = {}
local looked = 0

local function amount_of(record)
  -- The compact record reads [rowNumber, reference, "from", "to", amount, "CUR", ...]: a reference
  -- and account ids never hold ',<digits>,"', so the first such pair is the amount and currency.
  if string.sub(record, 1, 1) == '[' then
    local amount, currency = string.match(record, '^%[%d+,[^,]*,"[^"]*","[^"]*",(%d+),"(%u%u%u)"')
    if amount then return amount, currency end
  end
  local ok, r = pcall(cjson.decode, record)
  if not ok or type(r) ~= 'table' then return nil, nil end
  if r.instruction then return string.format('%d', r.instruction.amount), r.instruction.currency end
  return r[5] and string.format('%d', r[5]), r[6]
end

local function text_matches(key, record)
  if amounts ~= '' then
    local amount, currency = amount_of(record)
    if amount and currency and string.find(amounts, ',' .. currency .. ':' .. amount .. ',', 1, true) then
      return true
    end
    return false
  end
  if string.find(string.lower(record), needle, 1, true) then return true end
  if payees ~= '' then
    for id in string.gmatch(payees, '[^ ]+') do
      if string.find(record, '"' .. id .. '"', 1, true) then return true end
    end
  end
  return false
end

local function valid_matches(key, record)
  if states == '' and needle == '' then return true end
  local h = redis.call('HMGET', row_prefix .. key, 'state', 'paymentId', 'errorCode')
  if states ~= '' and (not h[1] or not string.find(states, ',' .. h[1] .. ',', 1, true)) then return false end
  if needle == '' then return true end
  if string.find(string.lower(key), needle, 1, true) then return true end
  if h[2] and string.find(string.lower(h[2]), needle, 1, true) then return true end
  if h[3] and string.find(string.lower(h[3]), needle, 1, true) then return true end
  record = record or redis.call('HGET', KEYS[2], key)
  return record and text_matches(key, record) or false
end

local function invalid_matches(record)
  if needle == '' then return true end
  return record and string.find(string.lower(record), needle, 1, true) ~= nil
end

local function answer(next_pos, next_skip)
  local out = { tostring(next_pos), tostring(next_skip), tostring(looked) }
  for _, k in ipairs(found) do out[#out + 1] = k end
  return out
end

if mode == 'list' or mode == 'invalid' then
  local i = tonumber(pos)
  while looked < budget do
    local keys
    if mode == 'list' then keys = redis.call('LRANGE', KEYS[1], i, i + CHUNK - 1)
    else keys = redis.call('ZRANGE', KEYS[1], i, i + CHUNK - 1) end
    if #keys == 0 then return answer(-1, 0) end
    local records
    if mode == 'invalid' and needle ~= '' then records = redis.call('HMGET', KEYS[3], unpack(keys)) end
    for j, key in ipairs(keys) do
      looked = looked + 1
      local hit
      if mode == 'list' then hit = valid_matches(key, nil) else hit = invalid_matches(records and records[j]) end
      if hit then
        found[#found + 1] = key
        if #found >= limit then return answer(i + j, 0) end
      end
    end
    i = i + #keys
    if #keys < CHUNK then return answer(-1, 0) end
  end
  return answer(i, 0)
end

-- mode 'hash': HSCAN the rows hash from a cursor; skip entries of the chunk handed out already.
local cursor = pos
while looked < budget do
  local reply = redis.call('HSCAN', KEYS[2], cursor, 'COUNT', CHUNK)
  local flat = reply[2]
  local n = #flat / 2
  for j = skip + 1, n do
    looked = looked + 1
    local key = flat[j * 2 - 1]
    if valid_matches(key, flat[j * 2]) then
      found[#found + 1] = key
      if #found >= limit then
        if j < n then return answer(cursor, j) end
        if reply[1] == '0' then return answer(-1, 0) end
        return answer(reply[1], 0)
      end
    end
  end
  skip = 0
  cursor = reply[1]
  if cursor == '0' then return answer(-1, 0) end
end
return answer(cursor, 0)
