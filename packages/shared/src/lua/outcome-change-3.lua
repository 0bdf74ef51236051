--[[
  One change to a webhook's outcome record: sets an action's fields, counts an attempt, removes
  fields, counts the change in this minute's action counts, keeps the record as long as its state
  asks (see includes/outcomeSnapshot), appends the record after the change to the record stream
  and announces it.

    Input:
      KEYS[1] the outcome record (a hash)
      KEYS[2] the record stream
      KEYS[3] this minute's action counts (a hash)

      ARGV[1]  seconds to keep a finished record (`RECORD_TTL_SECONDS`)
      ARGV[2]  the change channel
      ARGV[3]  the webhook id (announced on the channel)
      ARGV[4]  the attempts field to count one more on ('' for none)
      ARGV[5]  fields to remove, separated by spaces ('' for none)
      ARGV[6]  the attempt the change ended, as JSON ('' for none; '-': a change not recorded,
               neither appended to the stream nor shortening the record's time)
      ARGV[7]  the count in KEYS[3] to add one to ('' for none)
      ARGV[8...] field and value pairs to set

    Output:
      1 changed
      0 refused: the record is gone

    Events:
      PUBLISH ARGV[2] ARGV[3]
]]
--- @include "includes/outcomeChange"
return outcomeChange(KEYS, ARGV)
