-- A row's history, kept by the row scripts (included by them): one line per change,
-- `<at> <from|-> <to> <attempt> <note as JSON>`, only the latest HISTORY_MAX lines kept.
-- batch-store.ts parseHistory reads these lines; redis-scripts.ts HISTORY_MAX says why they look so.
local function history_line(now, from, to, attempt, note)
  return now .. ' ' .. (from or '-') .. ' ' .. to .. ' ' .. attempt .. ' ' .. note .. '\n'
end
-- The history with a line added, keeping only the latest HISTORY_MAX lines.
local function with_line(h, line)
  h = h .. line
  local _, n = string.gsub(h, '\n', '')
  while n > HISTORY_MAX do
    h = string.sub(h, string.find(h, '\n', 1, true) + 1)
    n = n - 1
  end
  return h
end
local function append_history(key, line)
  redis.call('HSET', key, 'history', with_line(redis.call('HGET', key, 'history') or '', line))
end
-- Puts the payment id a row is about to lose back into the history notes that hold its mark
-- (PAYMENT_ID_MARK), so the mark always stands for the row's current payment.
-- The id goes in as JSON string content (a note is JSON text): a quote or backslash stays escaped.
-- Returns the history unchanged when it holds no mark.
local function with_payment_id(h, payment_id)
  if not string.find(h, PAYMENT_ID_MARK, 1, true) then return h end
  local json = string.sub(cjson.encode(payment_id), 2, -2)
  return (string.gsub(h, PAYMENT_ID_MARK, (string.gsub(json, '%%', '%%%%'))))
end
local function expand_payment_mark(key, payment_id)
  local h = redis.call('HGET', key, 'history')
  if h then
    local expanded = with_payment_id(h, payment_id)
    if expanded ~= h then redis.call('HSET', key, 'history', expanded) end
  end
end
