-- Expires a batch if it is past due and fully recorded (approval-store.ts).
-- KEYS, ARGV: as decision-head.lua.
-- Returns {outcome, status, approvals, required}: outcome is expired | not-due | missing |
-- not-awaiting | not-ready.
-- include: decision-head.lua
local refused = common_checks()
if refused then return answer(refused) end
return answer('not-due')
