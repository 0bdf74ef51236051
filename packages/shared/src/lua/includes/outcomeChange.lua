--[[
  The change `outcome-change-3.lua` makes, for it and for scripts that make it with other checks
  (the worker's `action-start-4.lua`). Its arguments are laid out once, here: `outcomeChangeArgs`
  reads them from a script's ARGV from position `first` on (TypeScript's `outcomeChangeCall`
  builds them):

    first + 0  seconds to keep a record in flight or not yet in the record store (a dead letter's)
    first + 1  the change channel
    first + 2  the webhook id (announced on the channel)
    first + 3  the attempts field to count one more on ('' for none)
    first + 4  fields to remove, separated by spaces ('' for none)
    first + 5  the attempt the change ended, as JSON ('' for none; '-': a change not recorded,
               not appended to the record stream)
    first + 6  the count in the minute's action counts to add one to ('' for none)
    first + 7...  field and value pairs to set

  outcomeChange(recordKey, streamKey, countsKey, change) makes it: returns the action's attempts
  after the change when it counted one, else 1; 0 when the record is gone.
]]
--- @include "includes/outcomeSnapshot"
local function outcomeChangeArgs(argv, first)
  return {
    keepSeconds = tonumber(argv[first]),
    channel = argv[first + 1],
    webhookId = argv[first + 2],
    attemptsField = argv[first + 3],
    removed = argv[first + 4],
    attempt = argv[first + 5],
    count = argv[first + 6],
    fields = {unpack(argv, first + 7)},
  }
end

local function outcomeChange(recordKey, streamKey, countsKey, change)
  -- A record that is gone (kept past its time) is not rebuilt from one action's fields: the
  -- change is refused (0) rather than leave a record without its webhook. Its time to live, read
  -- once (-2: gone), is what the change keeps it at least (no command below shortens it).
  local ttl = redis.call('TTL', recordKey)
  if ttl == -2 then return 0 end
  redis.call('HSET', recordKey, unpack(change.fields))
  if change.count ~= '' then
    -- The minute's hash is given its time when a count starts in it.
    if redis.call('HINCRBY', countsKey, change.count, 1) == 1 then
      redis.call('EXPIRE', countsKey, ${ACTION_COUNTS_KEEP_SECONDS})
    end
  end
  local counted = 1
  if change.attemptsField ~= '' then
    counted = redis.call('HINCRBY', recordKey, change.attemptsField, 1)
  end
  if change.removed ~= '' then
    local removed = {}
    for field in string.gmatch(change.removed, '%S+') do removed[#removed + 1] = field end
    redis.call('HDEL', recordKey, unpack(removed))
  end
  if change.attempt == '-' then
    -- A change not recorded (a call's start): kept as long, and announced.
    if ttl < change.keepSeconds then redis.call('EXPIRE', recordKey, change.keepSeconds) end
    redis.call('PUBLISH', change.channel, change.webhookId)
    return counted
  end
  outcomeSnapshot(recordKey, streamKey, change.keepSeconds, change.channel, change.webhookId,
    change.attempt, ttl)
  return counted
end
