--[[
  An operator's override of a circuit: open stays open (no probes) until an operator closes it;
  closed starts afresh (suspect until the target answers).

    Input:
      KEYS[1] the circuit (a hash)
      KEYS[2] the set of every target

      ARGV[1]  the state: open or closed
      ARGV[2]  the target

    Output:
      'opened' or 'closed', the transition; '' when it was in that state already
]]
--- @include "includes/nowMs"
local now = nowMs()
redis.call('SADD', KEYS[2], ARGV[2])
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if ARGV[1] == 'open' then
  redis.call('HSET', KEYS[1], 'manual', 1, 'reason', 'manual')
  redis.call('HDEL', KEYS[1], 'recovering')
  if state == 'open' then return '' end
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', now)
  return 'opened'
end
redis.call('HDEL', KEYS[1], 'manual', 'probe_job', 'probe_until', 'next_probe_at', 'probe_next', 'reason', 'recovering')
redis.call('HSET', KEYS[1], 'failures', 0)
if state ~= 'open' then return '' end
redis.call('HSET', KEYS[1], 'state', 'closed', 'since', now, 'warm', 0)
return 'closed'
