--[[
  circuitEnter(KEYS, ARGV): the admission of a job before its call (`circuit-enter-5.lua`, whose
  KEYS, ARGV and reply these are).
]]
--- @include "includes/nowMs"
--- @include "includes/circuitLine"
local function circuitEnter(KEYS, ARGV)
local now = nowMs()
local job, order, threshold = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local interval, lease, maxHold = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'next_probe_at', 'probe_until', 'manual', 'warm')
local failures = tonumber(c[2] or '0')
local holdOnly = ARGV[8] == '1'
if holdOnly and c[1] ~= 'open' then return {'hold', 1, 0} end
if c[1] ~= 'open' then
  redis.call('ZREM', KEYS[2], job)
  if failures == 0 and c[6] == '1' then return {'call', 0} end
  -- Suspect (it failed lately, or has not answered yet): no more calls in flight than failures
  -- can still happen before the circuit opens.
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZSCORE', KEYS[3], job) or redis.call('ZCARD', KEYS[3]) + failures < threshold then
    redis.call('ZADD', KEYS[3], now + lease, job)
    redis.call('PEXPIRE', KEYS[3], lease)
    return {'call', 1}
  end
  return {'wait', 0}
end
local failedProbes = tonumber(redis.call('HGET', KEYS[5], 'failed_probes') or '0')
if c[5] ~= '1' and failedProbes >= ${RELEASED_AFTER_FAILED_PROBES} then
  redis.call('ZREM', KEYS[2], job)
  return {'released', 0}
end
if not holdOnly and c[5] ~= '1' and now >= tonumber(c[3] or '0') and now >= tonumber(c[4] or '0') then
  redis.call('HSET', KEYS[1], 'probe_job', job, 'probe_until', now + lease, 'next_probe_at', now + interval)
  redis.call('ZREM', KEYS[2], job)
  return {'probe', 0}
end
-- A job keeps its place in the line. It joins in its order, unless it failed lately (its call
-- just now, or one before this retry): then at the back, the others being likelier probes.
local newly = 0
if holdOnly or not redis.call('ZSCORE', KEYS[2], job) then
  if holdOnly or redis.call('EXISTS', KEYS[5]) == 1 then newly = circuitToBack(KEYS[2], job, now)
  else newly = redis.call('ZADD', KEYS[2], order, job) end
end
redis.call('SADD', KEYS[4], ARGV[7])
local first = circuitFirstInLine(KEYS[2], ARGV[9], job)
-- The first in line comes back for the next probe (a probe still in flight: a little later).
if first == job and c[5] ~= '1' then
  return {'hold', math.max(tonumber(c[3] or '0') - now, math.floor(interval / 10), 50), newly}
end
return {'hold', maxHold, newly, first or ''}
end
