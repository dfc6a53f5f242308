-- Rejects a batch (approval-store.ts); system identities never reject.
-- KEYS, ARGV: as decision-head.lua, then ARGV[4]: who rejects, ARGV[5]: the reason.
-- Returns {outcome, status, approvals, required}: outcome is rejected | system | missing |
-- not-awaiting | not-ready | expired.
-- include: decision-head.lua
local who = ARGV[4]
local refused = common_checks()
if refused then return answer(refused) end
if string.find(who, SYSTEM_IDENTITY_MARK, 1, true) then return answer('system') end
decide('rejected', who)
redis.call('HSET', approval, 'reason', ARGV[5])
return answer('rejected')
