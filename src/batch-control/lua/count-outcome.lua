-- Counts rows' outcomes into the batch's breaker counters (breaker.ts): the outcomes of the last
-- `window` rows (1 = refused), and how many rows in a row were refused with the same code. Paid rows
-- come counted together, before the one refusal (if any) the call carries: a paid row breaks a run.
-- KEYS: the batch's breaker hash.
-- ARGV: refusal code ('' = paid rows only), window, paid rows before it.
-- Returns {code, run, seen, failures}.
local code, window, paid = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 'recent', 'code', 'run')
local recent = (h[1] or '') .. string.rep('0', math.min(paid, window)) .. (code == '' and '' or '1')
if #recent > window then recent = string.sub(recent, #recent - window + 1) end
local run = 0
if code ~= '' then
  if paid == 0 and h[2] == code then run = tonumber(h[3] or '0') + 1 else run = 1 end
end
redis.call('HSET', KEYS[1], 'recent', recent, 'code', code, 'run', run)
local _, failures = string.gsub(recent, '1', '')
return {code, run, #recent, failures}
