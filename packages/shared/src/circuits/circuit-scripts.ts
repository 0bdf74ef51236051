import type { LuaCommand } from '../redis.js';

// The circuit breaker's scripts (see `CircuitStore`), each run atomically by Redis. Times are
// Redis's clock.

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Failed probes after which a held job is released: it calls as on a closed circuit and spends
 * its attempts (a poison input must not hold the circuit open).
 */
export const RELEASED_AFTER_FAILED_PROBES = 3;

/** How many keys and arguments `circuitEnter` takes, for scripts that pass it their slices. */
export const CIRCUIT_ENTER_KEYS = 5;
export const CIRCUIT_ENTER_ARGS = 9;

/**
 * The line of held jobs (a sorted set, first in line first), as Lua functions. `circuitFirstInLine(held,
 * jobKeyPrefix, job)`: the first job, passing over (and taking off the line) jobs removed by
 * hand, which would never come back for the probe; `job` is never passed over (it is being held
 * now); with no prefix, nothing is. `circuitToBack(held, job, now)`: puts `job` behind every job
 * in the line (one whose call or probe just failed); 1 when it was not in the line.
 */
const LINE_FUNCTIONS = `
local function circuitFirstInLine(held, jobKeyPrefix, job)
  local first = redis.call('ZRANGE', held, 0, 0)[1]
  while jobKeyPrefix ~= '' and first and first ~= job and redis.call('EXISTS', jobKeyPrefix .. first) == 0 do
    redis.call('ZREM', held, first)
    first = redis.call('ZRANGE', held, 0, 0)[1]
  end
  return first
end
local function circuitToBack(held, job, now)
  local last = redis.call('ZRANGE', held, -1, -1, 'WITHSCORES')
  if last[1] == job then return 0 end
  return redis.call('ZADD', held, math.max(now, tonumber(last[2] or '0') + 1), job)
end
`;

/**
 * The admission of a job before its call, as a Lua function `circuitEnter(KEYS, ARGV)` that other
 * scripts call with their own slices (the worker's start of an action, `pwActionStart`).
 * KEYS: circuit, held, in-flight, the set of targets, the job's failures. ARGV: job id, its
 * order (creation time), threshold, probe interval (jittered), lease, longest hold, target, '1' to
 * hold only (a job whose call just failed on an open circuit: never the probe at once, and held
 * at the back of the line; 1 ms if it closed since), the held jobs' key prefix ('' for none).
 * Returns {kind, n, newly}: call (n = 1 when tracked), probe, wait, released (the circuit is open
 * but the job's probe failed `RELEASED_AFTER_FAILED_PROBES` times: it calls, not as the probe),
 * hold (n = ms; newly = 1 when the job was not held already).
 */
export const CIRCUIT_ENTER_FUNCTION = `${LINE_FUNCTIONS}
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
return {'hold', maxHold, newly}
end
`;

export const ENTER: LuaCommand = {
  name: 'pwCircuitEnter',
  numberOfKeys: CIRCUIT_ENTER_KEYS,
  lua: `${CIRCUIT_ENTER_FUNCTION}
return circuitEnter(KEYS, ARGV)`,
};

/**
 * A probe that failed: its job goes to the back of the line, so that the next probe is another
 * job. The failure counts towards the job's release only if the target answered another call
 * since the job first failed: the job then fails where others get answers (a poison input),
 * while in an outage nothing is answered and a held job waits however long it lasts. Counted
 * `RELEASED_AFTER_FAILED_PROBES` times, the job is released: off the line. Runs inside `LEAVE`,
 * with its keys. Returns the job now first in line, to be woken for the next probe ('' for none,
 * or for this job).
 */
const FAILED_PROBE = `
redis.call('HSET', KEYS[1], 'next_probe_at', now + interval)
redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until')
local failing = redis.call('HMGET', KEYS[5], 'first_failure_at', 'failed_probes')
local counted = tonumber(failing[2] or '0')
if tonumber(c[6] or '0') > tonumber(failing[1] or now) then
  counted = redis.call('HINCRBY', KEYS[5], 'failed_probes', 1)
end
if counted >= ${RELEASED_AFTER_FAILED_PROBES} then
  redis.call('ZREM', KEYS[4], job)
else
  circuitToBack(KEYS[4], job, now)
end
local first = circuitFirstInLine(KEYS[4], ARGV[6], job)
if first == job then first = nil end
return {'open', '', failures, first or '', interval}
`;

/**
 * KEYS: circuit, in-flight, the set of targets, held, the job's failures. ARGV: job id, result,
 * threshold, probe interval (jittered), target, the held jobs' key prefix ('' for none), ms to
 * keep a job's failures after its last. Returns {state, transition ('' for none), failures, the
 * job to wake for the next probe ('' for none), ms to the next probe}. A retryable failure notes
 * the job's first (`first_failure_at`); an answer to the job forgets its failures; every answer
 * reported is noted in the circuit (`answered_at`).
 */
export const LEAVE: LuaCommand = {
  name: 'pwCircuitLeave',
  numberOfKeys: 5,
  lua: `${NOW}${LINE_FUNCTIONS}
local job, result, threshold, interval = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREM', KEYS[2], job)
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'manual', 'probe_job', 'warm', 'answered_at')
local state = c[1] or 'closed'
local failures = tonumber(c[2] or '0')
local wasProbe = c[4] == job
if result == 'neutral' then
  if wasProbe then redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until') end
  return {state, '', failures}
end
if result == 'answered' then
  redis.call('DEL', KEYS[5])
  if state == 'open' then
    if c[3] == '1' then
      redis.call('HSET', KEYS[1], 'answered_at', now)
      return {'open', '', failures}
    end
    redis.call('HSET', KEYS[1], 'state', 'closed', 'since', now, 'answered_at', now)
    redis.call('HSET', KEYS[1], 'failures', 0, 'warm', 1)
    redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until', 'next_probe_at')
    return {'closed', 'closed', 0}
  end
  -- Every first answer after a failure is reported (the target is suspect until then).
  if failures ~= 0 or c[5] ~= '1' then
    redis.call('HSET', KEYS[1], 'failures', 0, 'warm', 1, 'answered_at', now)
  end
  return {'closed', '', 0}
end
redis.call('SADD', KEYS[3], ARGV[5])
failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'warm', 0)
redis.call('HSETNX', KEYS[5], 'first_failure_at', now)
redis.call('PEXPIRE', KEYS[5], ARGV[7])
if state == 'open' then
  if wasProbe then
${FAILED_PROBE}
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
