--[[
  outcomeChange(KEYS, ARGV): one change to an outcome record, for `outcome-change-3.lua` and for
  scripts that make it with other checks (the worker's `action-start-4.lua`). KEYS and ARGV are
  those of `outcome-change-3.lua`; returns 1, or 0 when the record is gone.
]]
--- @include "includes/outcomeSnapshot"
local function outcomeChange(KEYS, ARGV)
  -- A record that is gone (kept past its time) is not rebuilt from one action's fields: the
  -- change is refused (0) rather than leave a record without its webhook.
  if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
  local attempt = ARGV[6]
  redis.call('HSET', KEYS[1], unpack(ARGV, 8))
  if ARGV[7] ~= '' then
    redis.call('HINCRBY', KEYS[3], ARGV[7], 1)
    redis.call('EXPIRE', KEYS[3], ${ACTION_COUNTS_KEEP_SECONDS})
  end
  if ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[4], 1) end
  for field in string.gmatch(ARGV[5], '%S+') do redis.call('HDEL', KEYS[1], field) end
  if attempt == '-' then
    -- A change not recorded (a call's start): its webhook is in flight, so the snapshot's reading
    -- of the whole record would only keep it as long as a dead letter, which this does.
    local long = math.max(tonumber(ARGV[1]), ${DEAD_LETTER_MIN_SECONDS})
    if redis.call('TTL', KEYS[1]) < long then redis.call('EXPIRE', KEYS[1], long) end
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1
  end
  outcomeSnapshot(KEYS, ARGV, attempt)
  return 1
end
