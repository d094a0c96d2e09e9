--@prelude release_latch
-- Release one write hold of a read-write lock, idempotently.
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}, told "1" (wake every waiter) when
--          the last write hold goes
-- KEYS[3]  unlock latch: remembers this release's answer, "not held" too, so
--          that a release resent after a lost reply, or its first copy run
--          late, repeats its first answer
-- ARGV[1]  lease (ms) to keep when write holds remain
-- ARGV[2]  "<owner>:write" (the writer field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  message for the last write hold ("1")
-- ARGV[5]  how long (ms) the latch is kept
-- ARGV[6]  "{NAME}" (or NAME when it has its own hash tag): the writer's read
--          hold keys are "<ARGV[6]>:<owner>:rwlock_timeout:<n>"
-- ARGV[7]  "0" when the client did not believe it held the lock: a "not held"
--          answer then leaves no latch (lua/prelude/release_latch.lua)
-- Returns nil (caller holds no write lock), 0 (still held, count decremented)
-- or 1 (the write lock is released).
-- If the writer still holds read locks, the lock stays read-locked by them
-- (a downgrade) and lives as long as the longest of them; other readers may
-- join, so every waiter is woken either way.
local seen = redis.call('get', KEYS[3])
if seen ~= false then
  return tonumber(seen)
end
if redis.call('hget', KEYS[1], 'mode') ~= 'write' then
  return not_held(KEYS[3], ARGV[5], ARGV[7])
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil then
  return not_held(KEYS[3], ARGV[5], ARGV[7])
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  local ttl = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(ttl, tonumber(ARGV[1])))
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end

-- The writer's own read holds that remain, read before any write.
local longest = -2
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field, n = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and field ~= ARGV[2] and n ~= nil then
    for k = 1, n do
      longest = math.max(longest, redis.call('pttl', ARGV[6] .. ':' .. field .. ':rwlock_timeout:' .. k))
    end
  end
end
-- PUBLISH before the first write: refused (an ACL), it leaves the lock as it was.
redis.call(ARGV[3], KEYS[2], ARGV[4])
redis.call('hdel', KEYS[1], ARGV[2])
if longest > 0 then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('pexpire', KEYS[1], longest)
else
  redis.call('del', KEYS[1])
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
