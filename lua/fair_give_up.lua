-- A waiter stops waiting for a fair lock (its wait timed out, or it failed):
-- it leaves the queue, and the waiters behind it move up without their
-- deadlines being pushed back.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock__channel:{NAME}; a waiter is woken on "<KEYS[2]>:<waiter id>"
-- KEYS[3]  redisson_lock_queue:{NAME}
-- KEYS[4]  redisson_lock_timeout:{NAME}
-- ARGV[1]  "" (no lease)
-- ARGV[2]  waiter id (the owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  wake-up message ("0")
-- ARGV[5]  W, the fair-lock wait timeout in milliseconds
-- Returns 1 if the waiter was queued, else 0.
-- A score is (latest attempt) + position * W (see fair_acquire.lua): each
-- waiter behind this one is now one place nearer the head, so its score drops
-- by W. Leaving it as it was would let a dead waiter there stall the queue for
-- W longer than the wait timeout allows.
local queue = redis.call('lrange', KEYS[3], 0, -1)
local position = nil
for i = 1, #queue do
  if queue[i] == ARGV[2] then
    position = i
    break
  end
end
if position == nil then
  redis.call('zrem', KEYS[4], ARGV[2])
  return 0
end
-- The head leaving a free lock: the next one may take it now, and would
-- otherwise only find out at its next attempt. PUBLISH before the first
-- write: refused (an ACL), it leaves the queue as it was.
if position == 1 and #queue > 1 and redis.call('exists', KEYS[1]) == 0 then
  redis.call(ARGV[3], KEYS[2] .. ':' .. queue[2], ARGV[4])
end
redis.call('zrem', KEYS[4], ARGV[2])
for i = position + 1, #queue do
  redis.call('zincrby', KEYS[4], -tonumber(ARGV[5]), queue[i])
end
redis.call('lrem', KEYS[3], 0, ARGV[2])
return 1
