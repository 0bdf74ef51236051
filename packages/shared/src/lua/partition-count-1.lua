--[[
  Stores the partition count in use, unless another count is stored: a compare-and-set, so that
  two processes starting with different counts cannot both take over an empty Redis.

    Input:
      KEYS[1] the stored partition count
      ARGV[1] the count this process runs with
      ARGV[2] the count it found stored ('' for none), which it may replace

    Output:
      the count stored now (ARGV[1] when it took; else the other process's)
]]
local stored = redis.call('GET', KEYS[1])
if stored == false or stored == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return stored
