--[[
  outcomeSnapshot(recordKey, streamKey, keepSeconds, channel, webhookId, attempt, ttlBefore):
  after a change to the outcome record `recordKey`, keeps it at least `keepSeconds` (the time a
  dead letter is kept: a webhook in flight, or finished before the record store has it, must not
  lose its record; the recorder shortens it to `RECORD_TTL_SECONDS` once the store has the
  webhook finished), appends the whole record to the record stream `streamKey` (an `outcome`
  change, with the attempt it ended, if any, as JSON in `attempt`) and announces `webhookId` on
  `channel`. `ttlBefore`: the record's time to live before the change (its `TTL`, which the
  change's own commands leave as it was), or nil to read it.
]]
local function outcomeSnapshot(recordKey, streamKey, keepSeconds, channel, webhookId, attempt, ttlBefore)
  if (ttlBefore or redis.call('TTL', recordKey)) < keepSeconds then
    redis.call('EXPIRE', recordKey, keepSeconds)
  end
  local flat = redis.call('HGETALL', recordKey)
  local record = {}
  for i = 1, #flat, 2 do record[flat[i]] = flat[i + 1] end
  redis.call('XADD', streamKey, '*', 'k', 'outcome', 'd', cjson.encode(record), 'a', attempt)
  redis.call('PUBLISH', channel, webhookId)
end
