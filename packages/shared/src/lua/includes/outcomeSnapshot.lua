--[[
  outcomeSnapshot(KEYS, ARGV, attempt, ttlBefore): after a recorded change to an outcome record,
  keeps the record as long as its state asks, appends the whole record to the record stream and
  announces the change.

  How long the record KEYS[1] is kept after a change (ARGV[1] is `RECORD_TTL_SECONDS`): while any
  action is still to run, as long as a dead letter (a webhook waiting out a long outage must not
  lose its record); once every action completed, `RECORD_TTL_SECONDS` (the record store has it);
  once finished with a failed action, as long as a dead letter, never less. Then appends the whole
  record after the change to the record stream KEYS[2] (an `outcome` change, with the attempt it
  ended, if any, in `attempt`; `-`: a change not worth recording) and announces the webhook id
  ARGV[3] on channel ARGV[2]. `ttlBefore`: the record's time to live before the change (its
  `TTL`, which the change's own commands leave as it was), or nil to read it.
]]
local function outcomeSnapshot(KEYS, ARGV, attempt, ttlBefore)
  local ttl = tonumber(ARGV[1])
  local long = math.max(ttl, ${DEAD_LETTER_MIN_SECONDS})
  local flat = redis.call('HGETALL', KEYS[1])
  local record = {}
  for i = 1, #flat, 2 do record[flat[i]] = flat[i + 1] end
  local finished, failed = true, false
  for _, name in ipairs(cjson.decode(record['actions'] or '[]')) do
    local state = record[name .. ':state']
    if state == 'failed' then failed = true elseif state ~= 'completed' then finished = false end
  end
  if finished and not failed then redis.call('EXPIRE', KEYS[1], ttl)
  elseif (ttlBefore or redis.call('TTL', KEYS[1])) < long then
    redis.call('EXPIRE', KEYS[1], long)
  end
  if attempt ~= '-' then
    redis.call('XADD', KEYS[2], '*', 'k', 'outcome', 'd', cjson.encode(record), 'a', attempt)
  end
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
