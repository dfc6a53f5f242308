-- Changes a row: optionally its state (forward only, or following its own payment between final
-- states: row-state.ts canFollowPayment), and fields. An empty field value deletes it.
--
-- A row in a final payment state follows its payment to another one only when the change names the
-- row's own payment (`paymentId`) and carries a `paymentUpdatedAt` newer than the stored one: the
-- service's newest word wins, an older or equal snapshot never moves a final row.
--
-- The batch's count of payments created per second (redis-layout.ts `createdPerSecond`, what the
-- reconciler sizes its page reads by) counts a row's payment once, when a change first records its
-- `paymentCreatedAt`. The batch's index of open rows (redis-layout.ts `open`: rows with a payment
-- that is not final yet, scored by their last touch, Redis time in ms) is kept with the move.
--
-- KEYS: row, counts, totals[, open index[, payments created per second]].
-- ARGV: expected attempt ('' = any), target state ('' = keep), now, note (JSON string or 'null'),
-- number of conditions n, then n pairs (field, value the caller read; '' = the field was absent),
-- then field/value pairs to write.
-- Returns {outcome, state before, attempt}: outcome is ok | missing | stale | terminal | refused |
-- outdated (the `paymentUpdatedAt` field, when given, is older than the stored one) | changed (a
-- condition field no longer holds what the caller read: another run wrote it meanwhile).
-- include: row-history.lua
-- include: time-ms.lua
-- include: ../../redis/lua/now-ms.lua
-- What the change needs of the row, in one read (its history only when that is rewritten).
local row = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'paymentId', 'paymentUpdatedAt', 'currency',
  'amount', 'paymentCreatedAt', 'requoteGeneration')
local cur, att = row[1], row[2]
if not cur then return {'missing', '', ''} end
if ARGV[1] ~= '' and ARGV[1] ~= att then return {'stale', cur, att} end
local conditions = tonumber(ARGV[5])
for i = 6, 5 + conditions * 2, 2 do
  -- An absent requote generation is 0 (a finished row drops a '0': below), as fence-send.lua reads it.
  local now_value = redis.call('HGET', KEYS[1], ARGV[i]) or (ARGV[i] == 'requoteGeneration' and '0' or '')
  if now_value ~= ARGV[i + 1] then return {'changed', cur, att} end
end
local first = 6 + conditions * 2
-- A payment snapshot older than the one already applied changes nothing. Times compare by their
-- milliseconds (stamps), else as text. `newer`: the change
-- carries a snapshot strictly newer than the stored one (or the row stores none); `same`: it names
-- the row's own payment. Both are needed for a final row to follow its payment.
local newer, same = false, false
local stored_payment, seen = row[3], row[4]
for i = first, #ARGV, 2 do
  if ARGV[i] == 'paymentUpdatedAt' and ARGV[i + 1] ~= '' then
    if seen then
      local given_ms, seen_ms = time_ms(ARGV[i + 1]), time_ms(seen)
      local older
      if given_ms and seen_ms then
        older = given_ms < seen_ms
        newer = given_ms > seen_ms
      else
        older = ARGV[i + 1] < seen
        newer = ARGV[i + 1] > seen
      end
      if older then return {'outdated', cur, att} end
    else
      newer = true
    end
  elseif ARGV[i] == 'paymentId' then
    same = stored_payment ~= false and stored_payment == ARGV[i + 1]
  end
end
local to = ARGV[2]
local now = ARGV[3]
local note = ARGV[4]
local changes = (to ~= '' and to ~= cur)
if not changes then
  if TERMINAL[cur] then return {'terminal', cur, att} end
  to = cur
else
  local allowed
  if cur == 'error' then allowed = ADOPTABLE_FROM_ERROR[to] == true
  elseif GIVE_UP[to] then allowed = cur == 'queued'
  elseif FOLLOW[cur] then allowed = FOLLOW[cur][to] == true and newer and same
  elseif to == 'returned' then allowed = false
  else allowed = RANK[to] ~= nil and RANK[to] > RANK[cur] end
  if not allowed then return {'refused', cur, att} end
end
-- The writes, gathered: one HSET and at most one HDEL for the whole change.
local sets, dels = {}, {}
local history, history_changed = nil, false
local payment_now, generation = stored_payment, row[8]
for i = first, #ARGV, 2 do
  local field, value = ARGV[i], ARGV[i + 1]
  if field == 'paymentId' then
    if stored_payment and stored_payment ~= value then
      history = history or redis.call('HGET', KEYS[1], 'history') or ''
      local expanded = with_payment_id(history, stored_payment)
      if expanded ~= history then history, history_changed = expanded, true end
    end
    payment_now = value ~= '' and value or false
  elseif field == 'paymentCreatedAt' and KEYS[5] and value ~= '' then
    -- Counted once per payment: when the row first records this creation time.
    if row[7] ~= value then
      local ms = time_ms(value)
      if ms then redis.call('HINCRBY', KEYS[5], tostring(math.floor(ms / 1000)), 1) end
    end
  elseif field == 'fees' then
    -- Fees in the row's own currency need not say it (row-fields.ts).
    local currency = row[5]
    if currency and string.sub(value, 1, #currency + 1) == currency .. '|' then
      value = string.sub(value, #currency + 2)
    end
  elseif field == 'requoteGeneration' then
    generation = value ~= '' and value or false
  end
  if value == '' then
    dels[#dels + 1] = field
  else
    sets[#sets + 1] = field
    sets[#sets + 1] = value
  end
end
sets[#sets + 1] = 'updatedAt'
sets[#sets + 1] = now
if changes then
  sets[#sets + 1] = 'state'
  sets[#sets + 1] = to
  local currency = row[5]
  local amount = tonumber(row[6])
  redis.call('HINCRBY', KEYS[2], cur, -1)
  redis.call('HINCRBY', KEYS[2], to, 1)
  redis.call('HINCRBY', KEYS[3], cur .. '|' .. currency, -amount)
  redis.call('HINCRBY', KEYS[3], to .. '|' .. currency, amount)
end
if changes or note ~= 'null' then
  history = with_line(history or redis.call('HGET', KEYS[1], 'history') or '', history_line(now, cur, to, att, note))
  history_changed = true
end
if history_changed then
  sets[#sets + 1] = 'history'
  sets[#sets + 1] = history
end
redis.call('HSET', KEYS[1], unpack(sets))
-- A row whose payment reached a terminal state never sends again, and only an `error` row's retry
-- asks when its last request was sent: what the sends needed is dropped (Redis per row).
if changes and PAYMENT_FINAL[to] and payment_now then
  for _, f in ipairs(SEND_ONLY_FIELDS) do dels[#dels + 1] = f end
  -- Readers take an absent generation for 0 (batch-store.ts rowFrom, the scripts here); any other
  -- generation stays, as the row's Idempotency-Key shown in its result is derived from it.
  if generation == '0' then dels[#dels + 1] = 'requoteGeneration' end
end
if #dels > 0 then redis.call('HDEL', KEYS[1], unpack(dels)) end
-- The open rows' index: the member is the row key (what follows the last `:row:` of the row's hash
-- key: row keys never contain a `:`).
if KEYS[4] then
  local member = string.match(KEYS[1], '.*:row:(.*)$')
  if TERMINAL[to] or not payment_now then
    redis.call('ZREM', KEYS[4], member)
  else
    redis.call('ZADD', KEYS[4], now_ms(), member)
  end
end
return {'ok', cur, att}
