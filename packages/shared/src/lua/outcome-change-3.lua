--[[
  One change to a webhook's outcome record: sets an action's fields, counts an attempt, removes
  fields, counts the change in this minute's action counts, keeps the record at least as long as
  a dead letter, appends the record after the change to the record stream and announces it (see
  includes/outcomeChange, which lays out ARGV).

    Input:
      KEYS[1] the outcome record (a hash)
      KEYS[2] the record stream
      KEYS[3] this minute's action counts (a hash)

      ARGV[1...] the change (includes/outcomeChange)

    Output:
      the action's attempts after the change when it counted one, else 1
      0 refused: the record is gone

    Events:
      PUBLISH of the webhook id on the change channel
]]
--- @include "includes/outcomeChange"
return outcomeChange(KEYS[1], KEYS[2], KEYS[3], outcomeChangeArgs(ARGV, 1))
