--[[
  The intake of a webhook, first in the transaction that adds its action jobs: deduplication,
  event order and record in one script.

  A repeat (KEYS[1] holds the first delivery's id) writes nothing but the keys KEYS[8...], which
  make BullMQ refuse, as duplicates, the action jobs added after this script in the same
  transaction: so a repeat adds no job, and a new webhook its jobs and its record, or neither.

    Input (the number of keys comes first in each call):
      KEYS[1] the deduplication key of the event's digest
      KEYS[2] the webhook's outcome record (a hash)
      KEYS[3] the record stream
      KEYS[4] the day's kept acks (a hash, for repeats)
      KEYS[5] this minute's ingress counts (a hash)
      KEYS[6] the set of minutes whose counts changed
      KEYS[7] the newest event time of the entity
      KEYS[8...] the deduplication keys of this delivery's action jobs

      ARGV[1]  milliseconds to keep the deduplication key
      ARGV[2]  seconds to keep a finished record (`RECORD_TTL_SECONDS`)
      ARGV[3]  the change channel
      ARGV[4]  the webhook id
      ARGV[5]  the accepted webhook as JSON (a `webhook` change in the record stream)
      ARGV[6]  its kept ack
      ARGV[7]  seconds to keep the day's acks
      ARGV[8]  the minute (ISO)
      ARGV[9]  the event's time in ms ('' for none)
      ARGV[10] milliseconds to keep the entity's newest time
      ARGV[11...] the record's field and value pairs

    Output:
      the first delivery's webhook id (a repeat), or ARGV[4]

    Events:
      PUBLISH ARGV[3] ARGV[4] (a new webhook only)
]]
local first = redis.call('GET', KEYS[1])
if first then
  for i = 8, #KEYS do redis.call('SET', KEYS[i], first, 'PX', ${REPEAT_BLOCK_MS}) end
  return first
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[1])
redis.call('HSET', KEYS[2], unpack(ARGV, 11))
if ARGV[9] ~= '' then
  local time = tonumber(ARGV[9])
  local newest = tonumber(redis.call('GET', KEYS[7]) or '-1')
  if time > newest then
    redis.call('SET', KEYS[7], ARGV[9], 'PX', ARGV[10])
  else
    redis.call('PEXPIRE', KEYS[7], ARGV[10])
    -- An event older than one already taken in for the entity is stale from the start.
    if newest > time then redis.call('HSET', KEYS[2], 'stale', '1') end
  end
end
redis.call('EXPIRE', KEYS[2], math.max(tonumber(ARGV[2]), ${DEAD_LETTER_MIN_SECONDS}))
redis.call('XADD', KEYS[3], '*', 'k', 'webhook', 'd', ARGV[5])
redis.call('HSET', KEYS[4], ARGV[4], ARGV[6])
redis.call('EXPIRE', KEYS[4], ARGV[7])
redis.call('HINCRBY', KEYS[5], 'accepted', 1)
redis.call('EXPIRE', KEYS[5], ${INGRESS_COUNTS_KEEP_SECONDS})
redis.call('SADD', KEYS[6], ARGV[8])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return ARGV[4]
