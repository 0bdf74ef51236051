--[[
  An entity's turn for one state-changing action (docs/architecture.md, Order): one call at a
  time. The turn is a key holding the job whose call it is, with a lease (a worker that dies
  mid-call gives it up when the lease ends); the jobs waiting for it are a sorted set by their
  event's order, so that the one woken when the turn is given is the oldest. A job's first try
  takes it in the same command as its out-of-order check (`ActionStart`): one round trip.

    Input:
      KEYS[1] the turn (the id of the job whose call it is; a lease)
      KEYS[2] the jobs waiting for it (a sorted set: job id by event order)
      KEYS[3] the queue's delayed jobs (BullMQ's), where a job waiting for its turn sleeps
      KEYS[4] the entity's newest event time (the out-of-order check's)

      ARGV[1] 'take' or 'give'
      ARGV[2] the job id
      take:
        ARGV[3] the lease (ms)
        ARGV[4] the job's event order (epoch ms)
        ARGV[5] the event's time in ms, checked against KEYS[4] first ('': not checked)

    Output:
      take: 'stale' when a newer event for the entity came first (nothing else done); 0 when the
            turn is the job's now (or was already); else the ms left on the lease of the call it
            waits for (the job is among the waiting)
      give: the id of the job to wake (the oldest waiting that still sleeps), or '' for none
]]
local job = ARGV[2]
if ARGV[1] == 'take' then
  if ARGV[5] ~= '' and tonumber(redis.call('GET', KEYS[4]) or '-1') > tonumber(ARGV[5]) then
    return 'stale'
  end
  local lease = tonumber(ARGV[3])
  local owner = redis.call('GET', KEYS[1])
  if not owner or owner == job then
    redis.call('SET', KEYS[1], job, 'PX', lease)
    redis.call('ZREM', KEYS[2], job)
    return 0
  end
  redis.call('ZADD', KEYS[2], 'NX', tonumber(ARGV[4]), job)
  -- Kept while anyone may wait: a waiter's job that is gone leaves with it.
  redis.call('PEXPIRE', KEYS[2], lease * 2)
  return math.max(1, redis.call('PTTL', KEYS[1]))
end
if redis.call('GET', KEYS[1]) == job then
  redis.call('DEL', KEYS[1])
end
-- The oldest waiting job that still sleeps; one that does not (woken already, or skipped since
-- as stale) no longer waits here.
while true do
  local next = redis.call('ZPOPMIN', KEYS[2])
  if not next[1] then return '' end
  if redis.call('ZSCORE', KEYS[3], next[1]) then return next[1] end
end
