-- What every PermitExpirableSemaphore script does first: permits whose
-- expiry (their score) is at or before `now` go back to the count, and the
-- new count is published when it is positive (Redisson's reclaim).
-- Returns the count after it.
local function reclaim_expired(name, timeouts, channel, publish, now, available)
  local expired = redis.call('zrangebyscore', timeouts, 0, now)
  if #expired == 0 then
    return available
  end
  -- In chunks: unpack() of a very long list overflows Lua's stack.
  for i = 1, #expired, 1000 do
    redis.call('zrem', timeouts, unpack(expired, i, math.min(i + 999, #expired)))
  end
  local value = redis.call('incrby', name, #expired)
  if value > 0 then
    redis.call(publish, channel, value)
  end
  return value
end
