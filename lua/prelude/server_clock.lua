-- The server's clock in epoch milliseconds (TIME), never a client's: a
-- client whose clock runs fast must not free other holders' live permits.
local function server_now_ms()
  local time = redis.call('time')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
