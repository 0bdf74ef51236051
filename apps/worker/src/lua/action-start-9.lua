--[[
  The start of an action's try, in one command instead of three round trips: the out-of-order
  check, the circuit's admission (includes/circuitEnter), and (when asked, and the circuit lets
  the call through) the call's start in the outcome record (@pw/shared's includes/outcomeChange),
  so that a call is counted before it is made.

    Input:
      KEYS[1] the entity's newest event time
      KEYS[2..6] the circuit's keys, those of `circuit-enter-5.lua`
      KEYS[7..9] the outcome record's keys, those of `outcome-change-3.lua`

      ARGV[1]  the event's time in ms ('': not checked)
      ARGV[2]  '1' to start the call when the circuit lets it through
      ARGV[3..11] the arguments of `circuit-enter-5.lua`
      ARGV[12...] the arguments of `outcome-change-3.lua`

    Output:
      {'stale'} when a newer event for the entity came first (nothing else done), else
      {kind, n, newly, started}: the circuit's admission (`circuit-enter-5.lua`'s reply, newly 0
      when it has none) and 1 when the call was started (counted in the record), else 0
]]
--- @include "includes/circuitEnter"
--- @include "includes/outcomeChange"
if ARGV[1] ~= '' and tonumber(redis.call('GET', KEYS[1]) or '-1') > tonumber(ARGV[1]) then
  return {'stale'}
end
local admission = circuitEnter({unpack(KEYS, 2, ${ENTER_KEYS_END})}, {unpack(ARGV, 3, ${ENTER_ARGS_END})})
local started = 0
local kind = admission[1]
if ARGV[2] == '1' and (kind == 'call' or kind == 'probe' or kind == 'released') then
  outcomeChange({unpack(KEYS, ${ENTER_KEYS_END} + 1)}, {unpack(ARGV, ${ENTER_ARGS_END} + 1)})
  started = 1
end
return {kind, admission[2], admission[3] or 0, started}
