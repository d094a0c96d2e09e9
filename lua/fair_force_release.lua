-- Delete a fair lock whoever holds it, and wake the queue head.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock_queue:{NAME}
-- KEYS[3]  redisson_lock_timeout:{NAME}
-- KEYS[4]  redisson_lock__channel:{NAME}; the head is woken on "<KEYS[4]>:<head id>"
-- ARGV[1]  wake-up message ("0")
-- ARGV[2]  W, the fair-lock wait timeout in milliseconds
-- Returns 1 if there was a lock to delete, else 0.
-- Gone waiters are dropped from the head first, as in fair_acquire.lua (see
-- there for what the deadlines mean), so that the wake-up reaches a live one.
if redis.replicate_commands ~= nil then
  redis.replicate_commands()  -- Redis < 5: TIME before writes needs effects replication
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local wait = tonumber(ARGV[2])

while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if head == false then
    break
  end
  local deadline = tonumber(redis.call('zscore', KEYS[3], head))
  if deadline ~= nil and deadline > now then
    break
  end
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], head)
  local waiters = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #waiters do
    redis.call('zincrby', KEYS[3], -wait, waiters[i])
  end
end

if redis.call('del', KEYS[1]) == 1 then
  local head = redis.call('lindex', KEYS[2], 0)
  if head ~= false then
    redis.call('publish', KEYS[4] .. ':' .. head, ARGV[1])
  end
  return 1
end
return 0
