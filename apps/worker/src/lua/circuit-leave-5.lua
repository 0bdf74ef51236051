--[[
  After the call of a job to a partner target (or instead of it): gives back the job's lease and
  moves the circuit. A retryable failure notes the job's first (`first_failure_at`); an answer to
  the job forgets its failures; every answer reported is noted in the circuit (`answered_at`).

  A probe that failed: its job goes to the back of the line, so that the next probe is another
  job. The failure counts towards the job's release only if the target answered another call
  since the job first failed: the job then fails where others get answers (a poison input), while
  in an outage nothing is answered and a held job waits however long it lasts. Counted
  `RELEASED_AFTER_FAILED_PROBES` times, the job is released: off the line.

    Input:
      KEYS[1] the circuit (a hash)
      KEYS[2] the calls in flight while the target is suspect (a sorted set)
      KEYS[3] the set of every target
      KEYS[4] the jobs it holds (a sorted set, first in line first)
      KEYS[5] the job's failures against the target (a hash)

      ARGV[1]  the job id
      ARGV[2]  the result: answered, unavailable or neutral (only the lease is given back)
      ARGV[3]  the failure threshold
      ARGV[4]  the probe interval (ms, jittered)
      ARGV[5]  the target
      ARGV[6]  the held jobs' key prefix, to pass over jobs removed by hand ('' for none)
      ARGV[7]  ms to keep the job's failures after its last
      ARGV[8]  the channel that announces a change to the circuit (the target is published when it
               opens, closes, or turns clean or suspect: the workers' copies listen)

    Output:
      {state, transition ('opened', 'closed', '' for none), failures}, and after a failed probe
      two more: the job now first in line, to wake for the next probe ('' for none), and the ms
      to the next probe
]]
--- @include "includes/nowMs"
--- @include "includes/circuitLine"
local now = nowMs()
local job, result, threshold, interval = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREM', KEYS[2], job)
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'manual', 'probe_job', 'warm', 'answered_at')
local state = c[1] or 'closed'
local failures = tonumber(c[2] or '0')
local wasProbe = c[4] == job
local wasClean = state ~= 'open' and failures == 0 and c[5] == '1'
local function announce() redis.call('PUBLISH', ARGV[8], ARGV[5]) end
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
    announce()
    return {'closed', 'closed', 0}
  end
  -- Every first answer after a failure is reported (the target is suspect until then).
  if failures ~= 0 or c[5] ~= '1' then
    redis.call('HSET', KEYS[1], 'failures', 0, 'warm', 1, 'answered_at', now)
    announce()
  end
  return {'closed', '', 0}
end
redis.call('SADD', KEYS[3], ARGV[5])
failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'warm', 0)
redis.call('HSETNX', KEYS[5], 'first_failure_at', now)
redis.call('PEXPIRE', KEYS[5], ARGV[7])
if wasClean then announce() end
if state == 'open' then
  if wasProbe then
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
  end
  return {'open', '', failures}
end
if failures >= threshold then
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', now, 'next_probe_at', now + interval)
  redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until')
  if not wasClean then announce() end
  return {'open', 'opened', failures}
end
return {'closed', '', failures}
