--[[
  Takes a slot for one call of an action under its limits (`rate_limit`, `max_concurrent`), or
  says how long to wait. Redis's clock is the one clock every worker shares.

    Input:
      KEYS[1] the start times of the action's calls in the rate window (a sorted set)
      KEYS[2] the leases of its calls in flight (a sorted set, member = job id, score = expiry)

      ARGV[1]  the job id
      ARGV[2]  the most calls in a rate window (0: no rate limit)
      ARGV[3]  the rate window (ms)
      ARGV[4]  the most calls in flight (0: no concurrency limit)
      ARGV[5]  the lease of a call in flight (ms)

    Output:
      0 the slot is taken
      -1 every in-flight slot is taken
      ms > 0 until the rate window has room
]]
--- @include "includes/nowMs"
local now = nowMs()
local member, rateMax, window = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local concurrentMax, lease = tonumber(ARGV[4]), tonumber(ARGV[5])
if concurrentMax > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if not redis.call('ZSCORE', KEYS[2], member) and redis.call('ZCARD', KEYS[2]) >= concurrentMax then
    return -1
  end
end
if rateMax > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  if redis.call('ZCARD', KEYS[1]) >= rateMax then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return math.max(1, tonumber(oldest[2]) + window - now)
  end
  redis.call('ZADD', KEYS[1], now, member .. ':' .. now)
  redis.call('PEXPIRE', KEYS[1], window)
end
if concurrentMax > 0 then
  redis.call('ZADD', KEYS[2], now + lease, member)
  redis.call('PEXPIRE', KEYS[2], lease)
end
return 0
