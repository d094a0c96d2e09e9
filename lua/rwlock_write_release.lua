--@prelude release_latch rwlock_hold
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
-- Calls: four when the last write hold goes and no read hold remains
-- (HGETALL, SET of the latch, PUBLISH, DEL), and a PTTL per read hold of the
-- writer's; five when write holds remain (HGETALL, SET, HINCRBY, PTTL, PEXPIRE).
-- One HGETALL reads the mode, the writer's count and the read holds at once.
local fields = redis.call('hgetall', KEYS[1])
local mode, count = mode_and_count(fields, ARGV[2])
if mode ~= 'write' or count == nil then
  -- A copy run after its first answer finds the hold gone: the latch says
  -- what that first answer was.
  local seen = redis.call('get', KEYS[3])
  if seen ~= false then
    return tonumber(seen)
  end
  return not_held(KEYS[3], ARGV[5], ARGV[7])
end
-- The latch is written first, only if it is not there (NX): there, it holds
-- the answer of a copy of this release that ran before, and this copy repeats
-- it and changes nothing (the hold it found is the owner's next one).
if not redis.call('set', KEYS[3], count > 1 and 0 or 1, 'nx', 'px', ARGV[5]) then
  return tonumber(redis.call('get', KEYS[3]))
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  local ttl = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(ttl, tonumber(ARGV[1])))
  return 0
end

-- The writer's own read holds that remain, read before any write but the latch.
local longest = -2
for i = 1, #fields, 2 do
  local field, n = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and field ~= ARGV[2] and n ~= nil then
    for k = 1, n do
      longest = math.max(longest, redis.call('pttl', ARGV[6] .. ':' .. field .. ':rwlock_timeout:' .. k))
    end
  end
end
-- PUBLISH before the lock's first write: refused (an ACL), it takes the latch
-- back and leaves the lock as it was.
local published = redis.pcall(ARGV[3], KEYS[2], ARGV[4])
if type(published) == 'table' and published.err ~= nil then
  redis.call('del', KEYS[3])
  return published
end
if longest > 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('pexpire', KEYS[1], longest)
else
  redis.call('del', KEYS[1])
end
return 1
