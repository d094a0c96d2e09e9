--@prelude key_guard
-- Delete a lock whoever holds it, and wake a waiter.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel
-- KEYS[3]  redisson_lock_queue:{NAME}: if it exists, the name is a fair lock
--          with waiters, which only FairLock may delete (and wake the right one)
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  unlock message ("0"), or "" to publish nothing (SpinLock)
-- Returns 1 if there was a lock to delete, else 0; an error reply starting
-- with WARDEN_WRONG_TYPE (nothing deleted) when the key is not a lock.
local refusal = key_refusal(KEYS[1], 'lock')
if refusal then
  return refusal
end
if redis.call('exists', KEYS[3]) == 1 then
  return redis.error_reply('WARDEN_WRONG_TYPE the key is a fair lock with waiters; force-unlock it as a fair lock')
end
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
-- PUBLISH first: if it is refused (an ACL), the script stops with the lock
-- left as it was, not deleted with nobody woken.
if ARGV[4] ~= '' then
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end
redis.call('del', KEYS[1])
return 1
