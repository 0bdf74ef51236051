--[[
  circuitEnter(KEYS, ARGV): the admission of a job before its call (`circuit-enter-6.lua`, whose
  KEYS, ARGV and reply these are).
]]
--- @include "includes/nowMs"
--- @include "includes/circuitLine"
local function circuitEnter(KEYS, ARGV)
local now = tonumber(ARGV[10]) or nowMs()
local job, order, threshold = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local interval, lease, maxHold = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'next_probe_at', 'probe_until',
  'manual', 'warm', 'recovering', 'probe_turn', 'probe_next', 'recovering_job', 'recovering_until',
  'recovering_poison')
local failures = tonumber(c[2] or '0')
local holdOnly = ARGV[8] == '1'
if holdOnly and c[1] ~= 'open' then
  -- The first failure after a close waits for the next call to tell (an interval at most).
  if c[12] == job then return {'hold', interval, 1} end
  return {'hold', 1, 0}
end
if c[1] ~= 'open' then
  redis.call('ZREM', KEYS[2], job)
  if failures == 0 and c[6] == '1' and c[7] ~= '1' then
    -- Clean: no lease. A job with failures against the target reports its answer (it is
    -- forgotten then).
    return {'call', 0, redis.call('EXISTS', KEYS[5])}
  end
  -- Suspect (it failed lately, has not answered yet, or was closed a moment ago): no more calls
  -- in flight than failures can still happen before it opens; one while it recovers.
  local limit = threshold - failures
  if c[7] == '1' then
    limit = 1
    -- The first call after a close is the first job woken's, unless it does not come in time.
    if c[10] and c[10] ~= job and now < tonumber(c[11] or '0') then return {'wait', 0} end
  end
  -- While other jobs fail too, a job that failed since the last 2xx, or a poison input's, calls
  -- only as a probe would: one such call per interval, so that repeats cannot send more than the
  -- threshold's calls to a failing target. Alone (or a poison input while only poison fails), it
  -- retries at its own policy's pace.
  local repeated = redis.call('SISMEMBER', KEYS[6], job)
  local others = redis.call('SCARD', KEYS[6]) - repeated
  if (repeated == 1 and others > 0)
      or (failures > 0 and redis.call('HGET', KEYS[5], 'poison') == '1') then
    if now < tonumber(c[3] or '0') then return {'wait', 0} end
    redis.call('HSET', KEYS[1], 'next_probe_at', now + interval)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZSCORE', KEYS[3], job) or redis.call('ZCARD', KEYS[3]) < limit then
    redis.call('ZADD', KEYS[3], now + lease, job)
    redis.call('PEXPIRE', KEYS[3], lease)
    return {'call', 1, 1}
  end
  return {'wait', 0}
end
-- Open. A job keeps its place in the line; it joins in its tier (fresh in its order, failed or
-- poison at the back).
local newly = 0
if holdOnly or not redis.call('ZSCORE', KEYS[2], job) then
  local failing = redis.call('HMGET', KEYS[5], 'failed_at', 'poison')
  if holdOnly or failing[1] then newly = circuitToBack(KEYS[2], job, now, failing[2] == '1')
  else newly = redis.call('ZADD', KEYS[2], order, job) end
end
redis.call('SADD', KEYS[4], ARGV[7])
local manual = c[5] == '1'
local nextProbe = tonumber(c[3] or '0')
local first = circuitFirstInLine(KEYS[2], ARGV[9], job, tonumber(c[8] or '0'))
local due = now >= nextProbe and now >= tonumber(c[4] or '0')
-- The probe is the first in line's; any job takes it once it is a whole interval overdue (the
-- first in line did not come).
if not holdOnly and not manual and due and (first == job or now >= nextProbe + interval) then
  redis.call('HSET', KEYS[1], 'probe_job', job, 'probe_until', now + lease, 'next_probe_at', now + interval)
  redis.call('HINCRBY', KEYS[1], 'probe_turn', 1)
  redis.call('HDEL', KEYS[1], 'probe_next')
  redis.call('ZREM', KEYS[2], job)
  return {'probe', 0}
end
if manual then return {'hold', maxHold, newly} end
-- The first in line comes back for the next probe (a probe still in flight: a little later).
local soon = math.max(nextProbe - now, math.floor(interval / 10), 50)
if first == job then
  redis.call('HSET', KEYS[1], 'probe_next', job)
  return {'hold', soon, newly}
end
-- Another is first: named (the caller checks it still exists, with no key prefix here), and to
-- be woken for the probe when it was not told yet.
local tell = 0
if first and first ~= c[9] then
  redis.call('HSET', KEYS[1], 'probe_next', first)
  tell = 1
end
return {'hold', maxHold, newly, first or '', soon, tell}
end
