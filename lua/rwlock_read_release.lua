--@prelude release_latch rwlock_hold
-- Release one read hold of a read-write lock, idempotently.
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}, told "0" when the lock is freed
-- KEYS[3]  this reader's hold keys prefix, "{NAME}:<owner>:rwlock_timeout"
-- KEYS[4]  unlock latch: remembers this release's answer, "not held" too, so
--          that a release resent after a lost reply, or its first copy run
--          late, repeats its first answer
-- ARGV[1]  "" (no lease)
-- ARGV[2]  owner (the reader field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  unlock message ("0")
-- ARGV[5]  how long (ms) the latch is kept
-- ARGV[6]  "{NAME}" (or NAME when it has its own hash tag): every reader's
--          hold keys are "<ARGV[6]>:<reader>:rwlock_timeout:<n>"
-- ARGV[7]  "0" when the client did not believe it held the lock: a "not held"
--          answer then leaves no latch (lua/prelude/release_latch.lua)
-- Returns nil (caller holds no read lock), 0 (the caller still reads, count
-- decremented) or 1 (the caller's last read hold is released).
-- The hash's TTL becomes the longest TTL of the read holds that remain (never
-- shorter than a write hold's, in write mode); with no read hold left alive
-- in read mode the lock is deleted and one waiting writer woken.
-- Calls: one HGETALL reads the mode, the reader's count and the other holds
-- at once; then the SET of the latch, a PTTL per other read hold, and the
-- writes (the last reader's: PUBLISH, HDEL, DEL of its hold key, DEL).
local fields = redis.call('hgetall', KEYS[1])
local mode, count = mode_and_count(fields, ARGV[2])
if mode == false or count == nil then
  -- A copy run after its first answer finds the hold gone: the latch says
  -- what that first answer was.
  local seen = redis.call('get', KEYS[4])
  if seen ~= false then
    return tonumber(seen)
  end
  return not_held(KEYS[4], ARGV[5], ARGV[7])
end
local left = count - 1
local result = left > 0 and 0 or 1
-- The latch is written first, only if it is not there (NX): there, it holds
-- the answer of a copy of this release that ran before, and this copy repeats
-- it and changes nothing (the hold it found is the owner's next one).
if not redis.call('set', KEYS[4], result, 'nx', 'px', ARGV[5]) then
  return tonumber(redis.call('get', KEYS[4]))
end

-- The longest TTL among the read holds that remain, of any reader (this
-- reader's hold number `count` is the one going), read before any write but
-- the latch.
local longest = -2
for i = 1, #fields, 2 do
  local field, n = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and n ~= nil and string.sub(field, -6) ~= ':write' then
    for k = 1, n do
      if field ~= ARGV[2] or k ~= count then
        longest = math.max(longest, redis.call('pttl', ARGV[6] .. ':' .. field .. ':rwlock_timeout:' .. k))
      end
    end
  end
end

-- PUBLISH before the lock's first write: refused (an ACL), it takes the latch
-- back and leaves the lock as it was.
local frees = mode ~= 'write' and longest <= 0
if frees then
  local published = redis.pcall(ARGV[3], KEYS[2], ARGV[4])
  if type(published) == 'table' and published.err ~= nil then
    redis.call('del', KEYS[4])
    return published
  end
end
if left == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
else
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
end
redis.call('del', KEYS[3] .. ':' .. count)

if mode == 'write' then
  -- The writer (this reader's own owner) still holds the lock.
  if longest > 0 then
    redis.call('pexpire', KEYS[1], math.max(longest, redis.call('pttl', KEYS[1])))
  end
elseif longest > 0 then
  redis.call('pexpire', KEYS[1], longest)
else
  redis.call('del', KEYS[1])
end
return result
