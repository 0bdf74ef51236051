--[[
  The line of jobs a circuit holds (a sorted set, first in line first).

  circuitFirstInLine(held, jobKeyPrefix, job): the first job, passing over (and taking off the
  line) jobs removed by hand, which would never come back for the probe; `job` is never passed
  over (it is being held now); with no prefix, nothing is.

  circuitToBack(held, job, now): puts `job` behind every job in the line (one whose call or probe
  just failed); 1 when it was not in the line.
]]
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
