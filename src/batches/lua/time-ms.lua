-- Milliseconds of a time as a row stores it: a base-36 stamp (row-fields.ts encodePaymentTime). nil
-- for a time kept as text (one that does not read back the same as a stamp), which compares as text.
-- Included by the row scripts.
local function time_ms(v)
  if not string.find(v, '[-:]') then return tonumber(v, 36) end
  return nil
end
