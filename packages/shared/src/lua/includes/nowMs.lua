--[[
  nowMs(): Redis's clock in milliseconds, the one clock every process shares.
]]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
