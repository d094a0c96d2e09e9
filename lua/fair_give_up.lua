-- A waiter stops waiting for a fair lock (its wait timed out, or it failed):
-- it leaves the queue, and the waiters behind it move up without their
-- deadlines being pushed back.
-- KEYS[1]  redisson_lock_queue:{NAME}
-- KEYS[2]  redisson_lock_timeout:{NAME}
-- KEYS[3]  lock name
-- KEYS[4]  redisson_lock__channel:{NAME}; a waiter is woken on "<KEYS[4]>:<waiter id>"
-- ARGV[1]  waiter id (the owner)
-- ARGV[2]  W, the fair-lock wait timeout in milliseconds
-- ARGV[3]  wake-up message ("0")
-- ARGV[4]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- Returns 1 if the waiter was queued, else 0.
-- A score is (latest attempt) + position * W (see fair_acquire.lua): each
-- waiter behind this one is now one place nearer the head, so its score drops
-- by W. Leaving it as it was would let a dead waiter there stall the queue for
-- W longer than the wait timeout allows.
local queue = redis.call('lrange', KEYS[1], 0, -1)
local position = nil
for i = 1, #queue do
  if queue[i] == ARGV[1] then
    position = i
    break
  end
end
if position == nil then
  redis.call('zrem', KEYS[2], ARGV[1])
  return 0
end
-- The head leaving a free lock: the next one may take it now, and would
-- otherwise only find out at its next attempt. PUBLISH before the first
-- write: refused (an ACL), it leaves the queue as it was.
if position == 1 and #queue > 1 and redis.call('exists', KEYS[3]) == 0 then
  redis.call(ARGV[4], KEYS[4] .. ':' .. queue[2], ARGV[3])
end
redis.call('zrem', KEYS[2], ARGV[1])
for i = position + 1, #queue do
  redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[i])
end
redis.call('lrem', KEYS[1], 0, ARGV[1])
return 1
