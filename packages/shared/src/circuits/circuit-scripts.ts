import type { LuaCommand } from '../redis.js';

// The circuit breaker's scripts (see `CircuitStore`), each run atomically by Redis. Times are
// Redis's clock.

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * The admission of a job before its call, as a Lua function `circuitEnter(KEYS, ARGV)` that other
 * scripts call with their own slices (the worker's start of an action, `pwActionStart`).
 * KEYS: circuit, held, in-flight, the set of targets. ARGV: job id, its order (creation time),
 * threshold, probe interval (jittered), lease, longest hold, target, '1' to hold only (a job
 * whose call just failed on an open circuit: never the probe at once; 1 ms if it closed since),
 * the held jobs' key prefix ('' for none).
 * Returns {kind, n, newly}: call (n = 1 when tracked), probe, wait, hold (n = ms; newly = 1 when
 * the job was not held already).
 */
export const CIRCUIT_ENTER_FUNCTION = `
local function circuitEnter(KEYS, ARGV)
${NOW}
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
if not holdOnly and c[5] ~= '1' and now >= tonumber(c[3] or '0') and now >= tonumber(c[4] or '0') then
  redis.call('HSET', KEYS[1], 'probe_job', job, 'probe_until', now + lease, 'next_probe_at', now + interval)
  redis.call('ZREM', KEYS[2], job)
  return {'probe', 0}
end
local newly = redis.call('ZADD', KEYS[2], 'NX', order, job)
redis.call('SADD', KEYS[4], ARGV[7])
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
-- A job removed by hand while first in line would never come back for the probe: pass it over.
while ARGV[9] ~= '' and first and first ~= job and redis.call('EXISTS', ARGV[9] .. first) == 0 do
  redis.call('ZREM', KEYS[2], first)
  first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
end
-- The first in line comes back for the next probe (a probe still in flight: a little later).
if first == job and c[5] ~= '1' then
  return {'hold', math.max(tonumber(c[3] or '0') - now, math.floor(interval / 10), 50), newly}
end
return {'hold', maxHold, newly}
end
`;

export const ENTER: LuaCommand = {
  name: 'pwCircuitEnter',
  numberOfKeys: 4,
  lua: `${CIRCUIT_ENTER_FUNCTION}
return circuitEnter(KEYS, ARGV)`,
};

/**
 * KEYS: circuit, in-flight, the set of targets. ARGV: job id, result, threshold, probe interval
 * (jittered), target. Returns {state, transition ('' for none), failures}.
 */
export const LEAVE: LuaCommand = {
  name: 'pwCircuitLeave',
  numberOfKeys: 3,
  lua: `${NOW}
local job, result, threshold, interval = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREM', KEYS[2], job)
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'manual', 'probe_job', 'warm')
local state = c[1] or 'closed'
local failures = tonumber(c[2] or '0')
local wasProbe = c[4] == job
if result == 'neutral' then
  if wasProbe then redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until') end
  return {state, '', failures}
end
if result == 'answered' then
  if state == 'open' then
    if c[3] == '1' then return {'open', '', failures} end
    redis.call('HSET', KEYS[1], 'state', 'closed', 'failures', 0, 'warm', 1, 'since', now)
    redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until', 'next_probe_at')
    return {'closed', 'closed', 0}
  end
  if failures ~= 0 or c[5] ~= '1' then redis.call('HSET', KEYS[1], 'failures', 0, 'warm', 1) end
  return {'closed', '', 0}
end
redis.call('SADD', KEYS[3], ARGV[5])
failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'warm', 0)
if state == 'open' then
  if wasProbe then
    redis.call('HSET', KEYS[1], 'next_probe_at', now + interval)
    redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until')
  end
  return {'open', '', failures}
end
if failures >= threshold then
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', now, 'next_probe_at', now + interval)
  redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until')
  return {'open', 'opened', failures}
end
return {'closed', '', failures}
`,
};

/**
 * KEYS: circuit, the set of targets. ARGV: state (open, closed), target. An operator's override:
 * open stays open (no probes) until an operator closes it; closed starts afresh (suspect until
 * the target answers). Returns the transition ('' when it was in that state already).
 */
export const OVERRIDE: LuaCommand = {
  name: 'pwCircuitOverride',
  numberOfKeys: 2,
  lua: `${NOW}
redis.call('SADD', KEYS[2], ARGV[2])
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if ARGV[1] == 'open' then
  redis.call('HSET', KEYS[1], 'manual', 1)
  if state == 'open' then return '' end
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', now)
  return 'opened'
end
redis.call('HDEL', KEYS[1], 'manual', 'probe_job', 'probe_until', 'next_probe_at')
redis.call('HSET', KEYS[1], 'failures', 0)
if state ~= 'open' then return '' end
redis.call('HSET', KEYS[1], 'state', 'closed', 'since', now, 'warm', 0)
return 'closed'
`,
};
