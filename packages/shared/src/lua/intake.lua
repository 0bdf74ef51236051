--[[
  The intake of a webhook, first in the transaction that adds its action jobs: deduplication,
  event order and record in one script.

  A repeat (its event's field in the hour's hash holds the first delivery's ack) writes nothing
  but the keys KEYS[8...], which make BullMQ refuse, as duplicates, the action jobs added after
  this script in the same transaction: so a repeat adds no job, and a new webhook its jobs and its
  record, or neither.

    Input (the number of keys comes first in each call):
      KEYS[1] the hash of the events of the hour of the event's timestamp (`keys.dedup`)
      KEYS[2] the webhook's outcome record (a hash)
      KEYS[3] the record stream
      KEYS[4] the previous version's deduplication key of the event (read only)
      KEYS[5] this minute's ingress counts (a hash)
      KEYS[6] the set of minutes whose counts changed
      KEYS[7] the newest event time of the entity
      KEYS[8...] the deduplication keys of this delivery's action jobs

      ARGV[1]  the event's field in KEYS[1] (16 bytes of its digest)
      ARGV[2]  milliseconds to keep KEYS[1] from now
      ARGV[3]  seconds to keep a finished record (`RECORD_TTL_SECONDS`)
      ARGV[4]  the change channel
      ARGV[5]  the webhook id
      ARGV[6]  the accepted webhook as JSON (a `webhook` change in the record stream)
      ARGV[7]  its kept ack (`<webhook id> <ms in base 36> <actions>`)
      ARGV[8]  the minute (ISO)
      ARGV[9]  the event's time in ms ('' for none)
      ARGV[10] milliseconds to keep the entity's newest time
      ARGV[11...] the record's field and value pairs

    Output:
      the first delivery's webhook id (a repeat), or ARGV[5]

    Events:
      PUBLISH ARGV[4] ARGV[5] (a new webhook only)
]]
local kept = redis.call('HGET', KEYS[1], ARGV[1])
local first = kept and string.match(kept, '^(.+) %w+ [^ ]*$')
-- The previous version's key: read until one deduplication window after the upgrade
-- (docs/operations.md, "Upgrading").
if not first then first = redis.call('GET', KEYS[4]) end
if first then
  for i = 8, #KEYS do redis.call('SET', KEYS[i], first, 'PX', ${REPEAT_BLOCK_MS}) end
  return first
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 11))
local stale = false
if ARGV[9] ~= '' then
  local time = tonumber(ARGV[9])
  local newest = tonumber(redis.call('GET', KEYS[7]) or '-1')
  if time > newest then
    redis.call('SET', KEYS[7], ARGV[9], 'PX', ARGV[10])
  else
    redis.call('PEXPIRE', KEYS[7], ARGV[10])
    -- An event older than one already taken in for the entity is stale from the start.
    if newest > time then
      redis.call('HSET', KEYS[2], 'stale', '1')
      stale = true
    end
  end
end
redis.call('EXPIRE', KEYS[2], math.max(tonumber(ARGV[3]), ${DEAD_LETTER_MIN_SECONDS}))
-- Said in the entry too: a webhook whose actions all complete on their first call has no other
-- change that would tell the record store (a completion is its action's change alone).
if stale then
  redis.call('XADD', KEYS[3], '*', 'k', 'webhook', 'd', ARGV[6], 's', '1')
else
  redis.call('XADD', KEYS[3], '*', 'k', 'webhook', 'd', ARGV[6])
end
redis.call('HINCRBY', KEYS[5], 'accepted', 1)
redis.call('EXPIRE', KEYS[5], ${INGRESS_COUNTS_KEEP_SECONDS})
redis.call('SADD', KEYS[6], ARGV[8])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return ARGV[5]
