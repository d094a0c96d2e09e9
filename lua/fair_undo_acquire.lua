-- Take back a fair-lock acquire whose reply was lost and whose caller has
-- given up, so that it cannot leave an orphan hold. Acts only if the hold
-- count is exactly what the lost acquire would have made it.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock_queue:{NAME}
-- KEYS[3]  redisson_lock__channel:{NAME}; the head is woken on "<KEYS[3]>:<head id>"
-- ARGV[1]  owner
-- ARGV[2]  hold count the lost acquire would have produced
-- ARGV[3]  lease (ms) to keep when holds remain
-- ARGV[4]  wake-up message ("0")
-- Returns 1 if a hold was taken back, else 0.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or count ~= tonumber(ARGV[2]) then
  return 0
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  redis.call('pexpire', KEYS[1], ARGV[3])
  return 1
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) == 0 then
  redis.call('del', KEYS[1])
  local head = redis.call('lindex', KEYS[2], 0)
  if head ~= false then
    redis.call('publish', KEYS[3] .. ':' .. head, ARGV[4])
  end
end
return 1
