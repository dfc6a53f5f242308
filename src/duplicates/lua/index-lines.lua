-- The duplicate index's lines (duplicate-index.ts), included after day-buckets.lua by the scripts that
-- read or write them. A field's value holds one line per row: `<batchId> TAB <rowNumber> TAB
-- <reference>`; a line counts only while its batch has a submission time in its day's `at` hash, so
-- taking a batch's time away hides all its lines at once. Rows are recorded in KEYS[1]'s day.
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

-- A field's lines in every day of KEYS of batches submitted after `since` (ms), but those starting
-- with `skip` (a batch's `<batchId> TAB`, or one row's `<batchId> TAB <rowNumber> TAB`): a list of
-- each line followed by its batch's submission time.
local function lines_of(field, hash, since, skip)
  local found = {}
  for d = 1, #KEYS do
    for k = 1, counts[d] > 0 and level_of(counts[d]) or 0 do
      local value = redis.call('HGET', bucket(d, k, hash), field)
      if value then
        for line in string.gmatch(value, '[^\n]+') do
          if not skip or string.sub(line, 1, #skip) ~= skip then
            local at = submitted_at(d, string.match(line, '^[^\t]*'))
            if at and tonumber(at) > since then
              found[#found + 1] = line
              found[#found + 1] = at
            end
          end
        end
      end
    end
  end
  return found
end

local touched = {}
local added = 0
-- Records a row's line in KEYS[1]'s day; a row already there (at any level the day reached) is left.
local function add_line(field, hash, line)
  local row = '\n' .. string.match(line, '^[^\t]*\t[^\t]*\t')
  for k = 1, counts[1] > 0 and level_of(counts[1]) or 0 do
    local value = redis.call('HGET', bucket(1, k, hash), field)
    if value and string.find('\n' .. value, row, 1, true) then return end
  end
  local key = bucket(1, level_of(counts[1]), hash)
  local value = redis.call('HGET', key, field)
  redis.call('HSET', key, field, value and (value .. '\n' .. line) or line)
  touched[key] = true
  counts[1] = counts[1] + 1
  added = added + 1
end

-- Ends a recording: the batch's submission time (the window is exact to the millisecond), the day's
-- count, and every key touched living at least `ttl` seconds (never shortened: a process with a
-- longer window may have set a later one).
local function finish_recording(batch, submitted_ms, ttl)
  local at = string.sub(KEYS[1], 1, -3) .. ':at'
  redis.call('HSET', at, batch, submitted_ms)
  touched[at] = true
  if added > 0 then
    redis.call('INCRBY', KEYS[1], added)
    touched[KEYS[1]] = true
  end
  for key in pairs(touched) do
    redis.call('EXPIRE', key, ttl, 'GT')
    redis.call('EXPIRE', key, ttl, 'NX')
  end
end
