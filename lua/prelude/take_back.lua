-- The take-back of a settled attempt that took effect on a lock's hash of
-- owner -> hold count: one hold off `field`, whose `count` the attempt made.
-- Holds that remain keep `lease`. When it was the lock's only hold, `wake`
-- runs before the lock is deleted: it publishes, and a refused PUBLISH (an
-- ACL) then leaves everything as it was.
local function take_back(key, field, count, lease, wake)
  if count > 1 then
    redis.call('hincrby', key, field, -1)
    redis.call('pexpire', key, lease)
  elseif redis.call('hlen', key) == 1 then
    wake()
    redis.call('del', key)
  else
    redis.call('hdel', key, field)
  end
end
