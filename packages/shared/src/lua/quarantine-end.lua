--[[
  The end of a quarantined webhook's quarantine, first in the transaction that adds its action
  jobs when it is released: `release` (it runs as an ordinary webhook with the same id) or
  `discard` (it ends, no action run).

  The webhook must still be quarantined: one whose quarantine ended (KEYS[5], kept as long as a
  dead letter, whatever became of its record), or whose record exists without the `quarantined`
  mark, was released or discarded already, and nothing is changed (0; the keys KEYS[6...] are then
  written, so BullMQ refuses the action jobs added after this script as duplicates). A record
  Redis no longer holds (kept past its time) is written whole again: the record store said it is
  quarantined.

  The kept ack of the event changes with it (ARGV[6]): a release makes it an ordinary one (a
  repeat is then answered with the actions), a discard says so (a repeat is told it was
  discarded). A release, like an intake, also judges the event against its entity's newest event
  time, the later of Redis's and the record store's (ARGV[9]): an entity's newer event makes it
  stale, and that time is written for the worker's own check; a newer event itself moves it.

    Input (the number of keys comes first in each call):
      KEYS[1] the webhook's outcome record (a hash)
      KEYS[2] the record stream
      KEYS[3] the hash of the events of the hour of the event's timestamp (`keys.dedup`)
      KEYS[4] the newest event time of the entity
      KEYS[5] the mark that the webhook's quarantine ended
      KEYS[6...] the deduplication keys of the release's action jobs

      ARGV[1] seconds to keep the record at least (a dead letter's)
      ARGV[2] the change channel
      ARGV[3] the webhook id
      ARGV[4] `release` or `discard`
      ARGV[5] the event's field in KEYS[3]
      ARGV[6] its kept ack once ended (`<webhook id> <ms in base 36> <actions>`, `-` discarded)
      ARGV[7] the event's time in ms ('' for none)
      ARGV[8] milliseconds to keep the entity's newest time, and the mark KEYS[5]
      ARGV[9] the entity's newest event time the record store knows (ms; '' for none)
      ARGV[10...] the record's field and value pairs after the change

    Output:
      1 when changed, 0 when the webhook was no longer quarantined

    Events:
      an `outcome` change in the record stream and PUBLISH ARGV[2] ARGV[3] (when changed)
]]
--- @include "includes/outcomeSnapshot"
if redis.call('EXISTS', KEYS[5]) == 1
  or (redis.call('HGET', KEYS[1], 'quarantined') ~= '1' and redis.call('EXISTS', KEYS[1]) == 1) then
  for i = 6, #KEYS do redis.call('SET', KEYS[i], ARGV[3], 'PX', ${REPEAT_BLOCK_MS}) end
  return 0
end
redis.call('SET', KEYS[5], ARGV[4], 'PX', ARGV[8])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 10))
-- The kept ack says what a repeat is answered from now on: the release's actions, or the discard.
local kept = redis.call('HGET', KEYS[3], ARGV[5])
local mine = ARGV[3] .. ' '
if kept and string.sub(kept, 1, #mine) == mine then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
if ARGV[4] == 'release' then
  if ARGV[7] ~= '' then
    local time = tonumber(ARGV[7])
    local newest = math.max(tonumber(redis.call('GET', KEYS[4]) or '-1'), tonumber(ARGV[9]) or -1)
    if time > newest then
      redis.call('SET', KEYS[4], ARGV[7], 'PX', ARGV[8])
    else
      redis.call('SET', KEYS[4], string.format('%d', newest), 'PX', ARGV[8])
      if newest > time then redis.call('HSET', KEYS[1], 'stale', '1') end
    end
  end
end
-- Kept as long as a dead letter until the recorder has the webhook's end in the record store.
outcomeSnapshot(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2], ARGV[3], '', nil)
return 1
