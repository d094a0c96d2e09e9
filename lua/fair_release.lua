-- Release one hold of a fair lock, idempotently, waking only the queue head.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock_queue:{NAME}
-- KEYS[3]  redisson_lock_timeout:{NAME}
-- KEYS[4]  redisson_lock__channel:{NAME}; the head is woken on "<KEYS[4]>:<head id>"
-- KEYS[5]  unlock latch: remembers this release's result, so that a release
--          resent after a lost reply repeats its first answer
-- ARGV[1]  wake-up message ("0")
-- ARGV[2]  lease (ms) to keep on the lock when holds remain
-- ARGV[3]  owner
-- ARGV[4]  how long (ms) the latch is kept
-- ARGV[5]  W, the fair-lock wait timeout in milliseconds
-- Returns nil (caller is not the owner), 0 (still held, count decremented)
-- or 1 (released).
-- Gone waiters are dropped from the head first, as in fair_acquire.lua (see
-- there for what the deadlines mean), so that the wake-up reaches a live one.
local seen = redis.call('get', KEYS[5])
if seen ~= false then
  return tonumber(seen)
end
if redis.replicate_commands ~= nil then
  redis.replicate_commands()  -- Redis < 5: TIME before writes needs effects replication
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local wait = tonumber(ARGV[5])

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

local function wake_head()
  local head = redis.call('lindex', KEYS[2], 0)
  if head ~= false then
    redis.call('publish', KEYS[4] .. ':' .. head, ARGV[1])
  end
end

if redis.call('exists', KEYS[1]) == 0 then
  -- Gone already (the caller's lease ran out): nobody was told it is free.
  wake_head()
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[4])
  return 0
end
redis.call('del', KEYS[1])
wake_head()
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
