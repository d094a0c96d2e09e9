-- Delete a lock whoever holds it, and wake a waiter.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel
-- KEYS[3]  redisson_lock_queue:{NAME}: if it exists, the name is a fair lock
--          with waiters, which only FairLock may delete (and wake the right one)
-- ARGV[1]  unlock message ("0"), or "" to publish nothing (SpinLock)
-- ARGV[2]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- Returns 1 if there was a lock to delete, else 0; an error reply starting
-- with WARDEN_WRONG_TYPE (nothing deleted) when the key is not a lock.
-- Only a lock's own hash is touched: a key of another type, a read-write
-- lock's hash (it has "mode") or a hash whose values are not hold counts is
-- refused before anything is written.
local key_type = redis.call('type', KEYS[1])['ok']
if key_type ~= 'none' then
  local foreign = key_type ~= 'hash'
  if not foreign then
    local fields = redis.call('hgetall', KEYS[1])
    for i = 1, #fields, 2 do
      if fields[i] == 'mode' or string.match(fields[i + 1], '^%d+$') == nil then
        foreign = true
      end
    end
  end
  if foreign then
    return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ' that is not a lock')
  end
end
if redis.call('exists', KEYS[3]) == 1 then
  return redis.error_reply('WARDEN_WRONG_TYPE the key is a fair lock with waiters; force-unlock it as a fair lock')
end
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
-- PUBLISH first: if it is refused (an ACL), the script stops with the lock
-- left as it was, not deleted with nobody woken.
if ARGV[1] ~= '' then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
end
redis.call('del', KEYS[1])
return 1
