-- One approver approves a batch (approval-store.ts): the batch is approved once the required number
-- of distinct approvers did.
-- KEYS, ARGV: as decision-head.lua, then ARGV[4]: the approver.
-- Returns {outcome, status, approvals, required}: outcome is approved | recorded | already | self |
-- system | missing | not-awaiting | not-ready | expired.
-- include: decision-head.lua
local who = ARGV[4]
-- Nobody approves their own batch, whatever its state; system identities (holding
-- SYSTEM_IDENTITY_MARK) never approve. A batch submitted from the shell is recorded as
-- CLI_IDENTITY_PREFIX .. '<os user>': the console user of that name is taken to be the same person
-- (shell and console names are not mapped otherwise, so refusing is safe).
local submitter = redis.call('HGET', approval, 'submittedBy')
if who == submitter or (CLI_IDENTITY_PREFIX .. who) == submitter then return answer('self') end
if string.find(who, SYSTEM_IDENTITY_MARK, 1, true) then return answer('system') end
if status == 'approved' and redis.call('HEXISTS', approvers, who) == 1 then return answer('already') end
local refused = common_checks()
if refused then return answer(refused) end
if redis.call('HEXISTS', approvers, who) == 1 then return answer('already') end
redis.call('HSET', approvers, who, now)
if redis.call('HLEN', approvers) >= tonumber(redis.call('HGET', approval, 'required')) then
  decide('approved', who)
  return answer('approved')
end
return answer('recorded')
