--[[
  Stores the partition count in use, unless another count is stored, and keeps beside it the
  secret that keys the entity-to-partition map (made once, never replaced). A compare-and-set:
  two processes starting on an empty Redis cannot both store their count, and the partitions
  command changes only the count it found.

    Input:
      KEYS[1] the stored partition count
      KEYS[2] the partition map's secret
      ARGV[1] the count to store
      ARGV[2] the count the caller found stored ('' for none), which it may replace
      ARGV[3] a secret the caller made up, kept only when none is stored

    Output:
      { the count stored now, the map's secret } when it is ARGV[1]; else { the count stored }
]]
local stored = redis.call('GET', KEYS[1])
if stored == false or stored == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1])
  stored = ARGV[1]
end
if stored ~= ARGV[1] then
  return { stored }
end
redis.call('SET', KEYS[2], ARGV[3], 'NX')
return { stored, redis.call('GET', KEYS[2]) }
