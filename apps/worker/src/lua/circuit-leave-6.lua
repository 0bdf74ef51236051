--[[
  After the call of a job to a partner target (or instead of it): gives back the job's lease and
  judges the answer. Only a 2xx (`succeeded`) closes the circuit; a refusal (`refused`: a 4xx
  other than 408/429, a token refused) ends that action and says nothing of the target.

  A retryable failure (`unavailable`) counts toward the circuit unless the job is a poison input:
  one judged so already, or one that failed before and whose target has served another call
  (a 2xx) since, while the circuit is closed. A poison input's failures never count; it is listed
  in KEYS[6] and spends its attempts. Counted failures open the circuit at the threshold; after a
  close (`recovering`, until the next 2xx) the first counted failure reopens it. While it
  recovers, one input judged poison is `recovering_poison`: should another fail before a 2xx,
  the target is failing, not that input: the circuit reopens, and the first is no longer poison.

  A probe that failed: its job goes to the back of its tier of the line, so that the next probe
  is another job's; the job now first in line is returned, to be woken for the next probe.

    Input:
      KEYS[1] the circuit (a hash)
      KEYS[2] the calls in flight while the target is suspect (a sorted set)
      KEYS[3] the set of every target
      KEYS[4] the jobs it holds (a sorted set, circuitLine's tiers)
      KEYS[5] the job's failures against the target (a hash: failed_at, poison)
      KEYS[6] the poison inputs (a sorted set: job id, ms judged)

      ARGV[1]  the job id
      ARGV[2]  the result: succeeded, refused, unavailable or neutral (only the lease is given back)
      ARGV[3]  the failure threshold
      ARGV[4]  the probe interval (ms, jittered)
      ARGV[5]  the target
      ARGV[6]  the held jobs' key prefix, to pass over jobs removed by hand ('' for none)
      ARGV[7]  ms to keep the job's failures after its last
      ARGV[8]  the channel that announces a change to the circuit (the target is published when it
               opens, closes, or turns clean or suspect: the workers' copies listen)
      ARGV[9]  the time in ms ('' for Redis's clock)
      ARGV[10] the most poison inputs listed

    Output:
      {state, transition ('opened', 'reopened', 'closed', '' for none), failures, the job to wake
      for the next probe ('' for none), ms to the next probe, poison (1 when the job is a poison
      input), judged (1 when this failure made it one)}
]]
--- @include "includes/nowMs"
--- @include "includes/circuitLine"
local now = tonumber(ARGV[9]) or nowMs()
local job, result, threshold, interval = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREM', KEYS[2], job)
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'manual', 'probe_job', 'warm',
  'succeeded_at', 'recovering', 'probe_turn', 'next_probe_at', 'recovering_poison')
local state = c[1] or 'closed'
local failures = tonumber(c[2] or '0')
local wasProbe = c[4] == job
local recovering = c[7] == '1'
local wasClean = state ~= 'open' and failures == 0 and c[5] == '1' and not recovering
local function announce() redis.call('PUBLISH', ARGV[8], ARGV[5]) end
-- After a probe that ended without closing the circuit: the next first in line, to be woken.
local function nextProbe()
  redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until')
  local first = circuitFirstInLine(KEYS[4], ARGV[6], job, tonumber(c[8] or '0'))
  if not first or first == job then return '', 0 end
  redis.call('HSET', KEYS[1], 'probe_next', first)
  return first, math.max(tonumber(c[9] or '0') - now, 0)
end
local function forgetJob()
  redis.call('DEL', KEYS[5])
  redis.call('ZREM', KEYS[6], job)
end
if result == 'neutral' then
  if wasProbe then
    local wake, inMs = nextProbe()
    return {state, '', failures, wake, inMs, 0, 0}
  end
  return {state, '', failures, '', 0, 0, 0}
end
if result == 'refused' then
  forgetJob()
  redis.call('ZREM', KEYS[4], job)
  if wasProbe then
    local wake, inMs = nextProbe()
    return {state, '', failures, wake, inMs, 0, 0}
  end
  return {state, '', failures, '', 0, 0, 0}
end
if result == 'succeeded' then
  forgetJob()
  redis.call('HSET', KEYS[1], 'succeeded_at', now)
  if state == 'open' then
    if c[3] == '1' then return {'open', '', failures, '', 0, 0, 0} end
    redis.call('HSET', KEYS[1], 'state', 'closed', 'since', now, 'failures', 0, 'warm', 0, 'recovering', 1)
    redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until', 'next_probe_at', 'probe_next', 'reason',
      'recovering_poison')
    announce()
    return {'closed', 'closed', 0, '', 0, 0, 0}
  end
  -- Every first 2xx after a failure or a close is reported (the target is suspect until then).
  if not wasClean then
    redis.call('HSET', KEYS[1], 'failures', 0, 'warm', 1)
    redis.call('HDEL', KEYS[1], 'recovering', 'recovering_poison')
    announce()
  end
  return {'closed', '', 0, '', 0, 0, 0}
end
-- A retryable failure: poison, or a count against the target. The poison pattern: the job failed
-- before, and the target served another call (a 2xx) since.
local f = redis.call('HMGET', KEYS[5], 'failed_at', 'poison')
local poison = f[2] == '1'
local judged = 0
local pattern = not poison and state ~= 'open' and f[1] ~= false
  and tonumber(c[6] or '0') > tonumber(f[1])
-- While it recovers, one input's repeat failure is that input's; a second input's failure
-- before any 2xx is the target's: it reopens, and the first is no longer taken for poison.
local doubted = recovering and c[10] or false
if pattern and (not recovering or not doubted) then
  poison, judged = true, 1
  redis.call('HSET', KEYS[5], 'poison', 1)
  redis.call('ZADD', KEYS[6], now, job)
  redis.call('ZREMRANGEBYRANK', KEYS[6], 0, -tonumber(ARGV[10]) - 1)
  if recovering then redis.call('HSET', KEYS[1], 'recovering_poison', job) end
end
redis.call('HSET', KEYS[5], 'failed_at', now)
redis.call('PEXPIRE', KEYS[5], ARGV[7])
redis.call('SADD', KEYS[3], ARGV[5])
if poison then
  redis.call('PEXPIRE', KEYS[6], ARGV[7])
  if state == 'open' and wasProbe then
    circuitToBack(KEYS[4], job, now, true)
    local wake, inMs = nextProbe()
    return {'open', '', failures, wake, inMs, 1, judged}
  end
  return {state, '', failures, '', 0, 1, judged}
end
failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'warm', 0)
if wasClean then announce() end
if state == 'open' then
  if wasProbe then
    circuitToBack(KEYS[4], job, now, false)
    local wake, inMs = nextProbe()
    return {'open', '', failures, wake, inMs, 0, 0}
  end
  return {'open', '', failures, '', 0, 0, 0}
end
if recovering or failures >= threshold then
  local reason = recovering and 'reopened' or 'failures'
  if doubted then
    redis.call('HDEL', KEYS[1] .. ':failing:' .. doubted, 'poison')
    redis.call('ZREM', KEYS[6], doubted)
  end
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', now, 'next_probe_at', now + interval, 'reason', reason)
  redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until', 'recovering', 'probe_next', 'recovering_poison')
  if not wasClean then announce() end
  return {'open', recovering and 'reopened' or 'opened', failures, '', 0, 0, 0}
end
return {'closed', '', failures, '', 0, 0, 0}
