--[[
  After the call of a job to a partner target (or instead of it): gives back the job's lease and
  judges the answer (docs/reliability-and-security.md, "Outages: the circuit breaker"). An input
  is an action's job; the failures of a webhook's actions are kept together (KEYS[5]), as calls
  about one event. Only a 2xx (`succeeded`) closes the circuit; a refusal (`refused`: a 4xx other
  than 408/429, a token refused) ends that action and says nothing of the target.

  A retryable failure (`unavailable`) counts toward the circuit, once per job among the failures
  in a row, unless it is poison: its webhook judged so already, or its webhook failed before, the
  target served another call (a 2xx) since, and no other job failed after that 2xx (the circuit
  closed and serving others). KEYS[7] names the jobs that failed since the last 2xx, counted or
  not: at most one job is judged poison per 2xx, so that an outage beginning cannot be taken for
  a string of poison inputs. A poison input's failures never count; its jobs are listed in
  KEYS[6] and spend their attempts. Counted failures of `threshold` jobs open the circuit.

  After a close (`recovering`, until the next 2xx), its first call is the first job woken's
  (`recovering_job`, for an interval). The first failure then may be that one input's: its job
  is held without an attempt spent or a count (`recovering_poison`), and the next call tells;
  another job's failure before any 2xx reopens the circuit.

  A probe that did not close it: its job goes to the back of its tier of the line, and the job
  now first in line is returned, to be woken for the next probe.

    Input:
      KEYS[1] the circuit (a hash)
      KEYS[2] the calls in flight while the target is suspect (a sorted set)
      KEYS[3] the set of every target
      KEYS[4] the jobs it holds (a sorted set, circuitLine's tiers)
      KEYS[5] the job's webhook's failures against the target (a hash: failed_at, poison)
      KEYS[6] the jobs of poison inputs (a sorted set: job id, ms)
      KEYS[7] the jobs that failed since the last 2xx, counted or judged poison then (a set)

      ARGV[1]  the job id
      ARGV[2]  the result: succeeded, refused, unavailable or neutral (only the lease is given back)
      ARGV[3]  the failure threshold
      ARGV[4]  the probe interval (ms, jittered)
      ARGV[5]  the target
      ARGV[6]  the held jobs' key prefix, to pass over jobs removed by hand ('' for none)
      ARGV[7]  ms to keep a webhook's failures after its last
      ARGV[8]  the channel that announces a change to the circuit (the target is published when it
               opens, closes, or turns clean or suspect: the workers' copies listen)
      ARGV[9]  the time in ms ('' for Redis's clock)
      ARGV[10] the most jobs of poison inputs listed
      ARGV[11] the job's webhook id
      ARGV[12] ms since the job's call was sent ('' when not known): a 2xx to a call sent before
               the target's last counted failure (`failed_at`) says nothing of the target since,
               and changes nothing of the circuit

    Output:
      {state, transition ('opened', 'reopened', 'closed', '' for none), failures, the job to wake
      for the next probe ('' for none), ms to the next probe, poison (1 when the job's webhook is
      poison), judged (1 when this failure made it so), held (1: hold the job, no attempt spent,
      though the circuit is closed)}
]]
--- @include "includes/nowMs"
--- @include "includes/circuitLine"
local now = tonumber(ARGV[9]) or nowMs()
local job, result, threshold, interval = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local webhook = ARGV[11]
redis.call('ZREM', KEYS[2], job)
local c = redis.call('HMGET', KEYS[1], 'state', 'failures', 'manual', 'probe_job', 'warm',
  'succeeded_at', 'recovering', 'probe_turn', 'next_probe_at', 'recovering_poison', 'failed_at')
local state = c[1] or 'closed'
local failures = tonumber(c[2] or '0')
local wasProbe = c[4] == job
local recovering = c[7] == '1'
local wasClean = state ~= 'open' and failures == 0 and c[5] == '1' and not recovering
local function announce() redis.call('PUBLISH', ARGV[8], ARGV[5]) end
local function reply(to, transition, wake, inMs, poison, judged, held)
  return {to, transition or '', failures, wake or '', inMs or 0, poison and 1 or 0, judged or 0,
    held or 0}
end
-- After a probe that did not close it: the next first in line, to be woken.
local function nextProbe()
  redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until')
  local first = circuitFirstInLine(KEYS[4], ARGV[6], job, tonumber(c[8] or '0'))
  if not first or first == job then return '', 0 end
  redis.call('HSET', KEYS[1], 'probe_next', first)
  return first, math.max(tonumber(c[9] or '0') - now, 0)
end
if result == 'neutral' or result == 'refused' then
  if result == 'refused' then
    redis.call('ZREM', KEYS[6], job)
    redis.call('ZREM', KEYS[4], job)
  end
  if wasProbe then
    local wake, inMs = nextProbe()
    return reply(state, '', wake, inMs)
  end
  return reply(state)
end
if result == 'succeeded' then
  redis.call('ZREM', KEYS[6], job)
  -- An answer older than the target's last counted failure (the call was sent before it) does not
  -- make the target clean again, nor close it: late 2xx to calls sent before an outage began
  -- would otherwise reset its count, again and again, and let a flood of calls through. A probe
  -- was sent on an open circuit: its answer is the newest news.
  local sentMsAgo = tonumber(ARGV[12])
  if not wasProbe and sentMsAgo and tonumber(c[11] or '0') > now - sentMsAgo then
    return reply(state)
  end
  redis.call('HSET', KEYS[1], 'succeeded_at', now)
  redis.call('DEL', KEYS[7])
  if state == 'open' then
    if c[3] == '1' then return reply('open') end
    failures = 0
    redis.call('HSET', KEYS[1], 'state', 'closed', 'since', now, 'failures', 0, 'warm', 0, 'recovering', 1)
    redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until', 'next_probe_at', 'probe_next', 'reason',
      'recovering_poison', 'recovering_job')
    -- The first call after the close is the first job woken (the newest fresh one), for an
    -- interval: not whichever woken job comes first.
    local first = redis.call('ZREVRANGEBYSCORE', KEYS[4], '(' .. FAILED_TIER, '-inf', 'LIMIT', 0, 1)[1]
      or redis.call('ZRANGE', KEYS[4], 0, 0)[1]
    if first then redis.call('HSET', KEYS[1], 'recovering_job', first, 'recovering_until', now + interval) end
    announce()
    return reply('closed', 'closed')
  end
  -- Every first 2xx after a failure or a close is reported (the target is suspect until then).
  failures = 0
  if not wasClean then
    redis.call('HSET', KEYS[1], 'failures', 0, 'warm', 1)
    redis.call('HDEL', KEYS[1], 'recovering', 'recovering_poison', 'recovering_job')
    announce()
  end
  return reply('closed')
end
-- A retryable failure: its webhook's, or the target's.
local f = redis.call('HMGET', KEYS[5], 'failed_at', 'poison')
local poison = f[2] == '1'
local judged = 0
-- While it recovers, the first failure may be that one input's: held, without an attempt spent
-- or a count, while the next call tells; another failure before any 2xx is the target's.
if recovering and not poison and not c[10] then
  redis.call('HSET', KEYS[1], 'recovering_poison', job)
  redis.call('HDEL', KEYS[1], 'recovering_job')
  redis.call('HSET', KEYS[5], 'failed_at', now)
  redis.call('PEXPIRE', KEYS[5], ARGV[7])
  return reply('closed', '', '', 0, false, 0, 1)
end
local othersFailed = redis.call('SCARD', KEYS[7]) - redis.call('SISMEMBER', KEYS[7], job)
local pattern = not poison and state ~= 'open' and not recovering and othersFailed == 0
  and f[1] ~= false and tonumber(c[6] or '0') > tonumber(f[1])
if pattern then
  poison, judged = true, 1
  redis.call('HSET', KEYS[5], 'poison', 1)
end
redis.call('HSET', KEYS[5], 'failed_at', now)
redis.call('PEXPIRE', KEYS[5], ARGV[7])
redis.call('SADD', KEYS[3], ARGV[5])
-- A failure not yet explained is noted (counted, or judged poison now): one judgement per 2xx
-- (the next failure of another job is the target's), and the target suspect (its calls
-- bounded). A known poison input's failure is its own: it changes nothing of the target.
local firstInRun = false
if not poison or judged == 1 then
  firstInRun = redis.call('SADD', KEYS[7], job) == 1
  redis.call('HSET', KEYS[1], 'warm', 0)
  if wasClean then announce() end
end
if poison then
  redis.call('ZADD', KEYS[6], now, job)
  redis.call('ZREMRANGEBYRANK', KEYS[6], 0, -tonumber(ARGV[10]) - 1)
  redis.call('PEXPIRE', KEYS[6], ARGV[7])
  if state == 'open' and wasProbe then
    circuitToBack(KEYS[4], job, now, true)
    local wake, inMs = nextProbe()
    return reply('open', '', wake, inMs, true, judged)
  end
  return reply(state, '', '', 0, true, judged)
end
-- Counted once per job in a run of failures; a 2xx to a call sent before now no longer tells.
if firstInRun then failures = redis.call('HINCRBY', KEYS[1], 'failures', 1) end
redis.call('HSET', KEYS[1], 'failed_at', now)
if state == 'open' then
  if wasProbe then
    circuitToBack(KEYS[4], job, now, false)
    local wake, inMs = nextProbe()
    return reply('open', '', wake, inMs)
  end
  return reply('open')
end
if recovering or failures >= threshold then
  local reason = recovering and 'reopened' or 'failures'
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', now, 'next_probe_at', now + interval, 'reason', reason)
  redis.call('HDEL', KEYS[1], 'probe_job', 'probe_until', 'recovering', 'probe_next', 'recovering_poison',
    'recovering_job')
  if not wasClean then announce() end
  return reply('open', recovering and 'reopened' or 'opened')
end
return reply('closed')
