--[[
  outcomeChange(KEYS, ARGV): one change to an outcome record, for `outcome-change-3.lua` and for
  scripts that make it with other checks (the worker's `action-start-4.lua`). KEYS and ARGV are
  those of `outcome-change-3.lua`; returns 1, or 0 when the record is gone.
]]
--- @include "includes/outcomeSnapshot"
local function outcomeChange(KEYS, ARGV)
  -- A record that is gone (kept past its time) is not rebuilt from one action's fields: the
  -- change is refused (0) rather than leave a record without its webhook. Its time to live, read
  -- once (-2: gone), is what the change keeps it at least (no command below shortens it).
  local ttl = redis.call('TTL', KEYS[1])
  if ttl == -2 then return 0 end
  local attempt = ARGV[6]
  redis.call('HSET', KEYS[1], unpack(ARGV, 8))
  if ARGV[7] ~= '' then
    -- The minute's hash is given its time when a count starts in it.
    if redis.call('HINCRBY', KEYS[3], ARGV[7], 1) == 1 then
      redis.call('EXPIRE', KEYS[3], ${ACTION_COUNTS_KEEP_SECONDS})
    end
  end
  if ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[4], 1) end
  if ARGV[5] ~= '' then
    local removed = {}
    for field in string.gmatch(ARGV[5], '%S+') do removed[#removed + 1] = field end
    redis.call('HDEL', KEYS[1], unpack(removed))
  end
  if attempt == '-' then
    -- A change not recorded (a call's start): its webhook is in flight, so the snapshot's reading
    -- of the whole record would only keep it as long as a dead letter, which this does.
    local long = math.max(tonumber(ARGV[1]), ${DEAD_LETTER_MIN_SECONDS})
    if ttl < long then redis.call('EXPIRE', KEYS[1], long) end
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1
  end
  outcomeSnapshot(KEYS, ARGV, attempt, ttl)
  return 1
end
