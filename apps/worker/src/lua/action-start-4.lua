--[[
  The start of an action's try, in its webhook's partition: the out-of-order check and (when
  asked) the call's start in the outcome record (@pw/shared's includes/outcomeChange), so that a
  call is counted before it is made. The circuit's admission lives on the shared keys, another
  slot in a Redis Cluster: it is a command of its own (`circuit-enter-6.lua`), which a worker
  passes over while its copy of the circuit says closed and clean (see `ActionStart`).

    Input:
      KEYS[1] the entity's newest event time
      KEYS[2..4] the outcome record's keys, those of `outcome-change-3.lua`

      ARGV[1]  the event's time in ms ('': not checked)
      ARGV[2]  '1' to start the call
      ARGV[3]  the action's attempts field when the job stalled before ('' otherwise): if no
               attempt of the action is counted yet, its first try (counted at its end) stopped
               with its worker, maybe after its call, and counts as one
      ARGV[4...] the change that starts the call (includes/outcomeChange)

    Output:
      'stale' when a newer event for the entity came first (nothing else done); when the call
      was started, the action's attempts counted with it (0: the record is gone); else 'fresh'
]]
--- @include "includes/outcomeChange"
if ARGV[1] ~= '' and tonumber(redis.call('GET', KEYS[1]) or '-1') > tonumber(ARGV[1]) then
  return 'stale'
end
if ARGV[2] ~= '1' then return 'fresh' end
if ARGV[3] ~= '' and redis.call('EXISTS', KEYS[2]) == 1
    and tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0') == 0 then
  redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
end
return outcomeChange(KEYS[2], KEYS[3], KEYS[4], outcomeChangeArgs(ARGV, 4))
