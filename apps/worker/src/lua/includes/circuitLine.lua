--[[
  The line of jobs a circuit holds: one sorted set in three tiers, by score.

    fresh    (score < FAILED_TIER): never failed against the target; score = the job's order
             (creation time, ms)
    failed   (FAILED_TIER + ms): failed (its call, or its probe); to the back at each failure
    poison   (POISON_TIER + ms): judged a poison input; last of all

  circuitFirstInLine(held, jobKeyPrefix, job, turn): the next probe's job. Fresh jobs first, the
  newest on an even turn and the oldest on an odd one (a burst of poison fresh jobs, before or
  after an ordinary one, cannot stand ahead of it on both turns); then the failed, the one that
  failed longest ago first; then the poison. Passes over (and takes off the line) jobs removed by
  hand, which would never come back for the probe; `job` is never passed over (it is being held
  now); with no prefix, nothing is.

  circuitToBack(held, job, now, poison): puts `job` at the back of the failed (or poison) tier;
  1 when it was not in the line.
]]
local FAILED_TIER = 1e13
local POISON_TIER = 2e13
local function circuitPeek(held, turn)
  local fresh
  if turn % 2 == 0 then
    fresh = redis.call('ZREVRANGEBYSCORE', held, '(' .. FAILED_TIER, '-inf', 'LIMIT', 0, 1)[1]
  else
    fresh = redis.call('ZRANGEBYSCORE', held, '-inf', '(' .. FAILED_TIER, 'LIMIT', 0, 1)[1]
  end
  return fresh or redis.call('ZRANGE', held, 0, 0)[1]
end
local function circuitFirstInLine(held, jobKeyPrefix, job, turn)
  local first = circuitPeek(held, turn)
  while jobKeyPrefix ~= '' and first and first ~= job and redis.call('EXISTS', jobKeyPrefix .. first) == 0 do
    redis.call('ZREM', held, first)
    first = circuitPeek(held, turn)
  end
  return first
end
local function circuitToBack(held, job, now, poison)
  local tier = poison and POISON_TIER or FAILED_TIER
  return redis.call('ZADD', held, tier + now, job)
end
