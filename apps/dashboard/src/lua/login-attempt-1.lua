--[[
  One login from a client address, checked and counted in one command: an address at the limit
  is refused, whatever it sent. Otherwise a failure is counted (the first one starts the window,
  a fixed span).

    Input:
      KEYS[1] the address's count of failed logins, which expires when its window ends

      ARGV[1]  1 when this login failed, else 0
      ARGV[2]  the failures allowed in a window
      ARGV[3]  the window (ms)

    Output:
      {0, ms until the address's window ends}: refused
      {1, failures in the window so far}: allowed
]]
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
if failures >= tonumber(ARGV[2]) then
  local left = redis.call('PTTL', KEYS[1])
  if left > 0 then return {0, left} end
end
if ARGV[1] == '1' then
  failures = redis.call('INCR', KEYS[1])
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
end
return {1, failures}
