--@prelude release_latch
-- Release one hold of a re-entrant lock, idempotently.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel, told "0" when the lock is freed
-- KEYS[3]  unlock latch: remembers this release's answer, "not held" too, so
--          that a release resent after a lost reply, or its first copy run
--          late, repeats its first answer instead of decrementing twice,
--          answering "not owner" or releasing the owner's next hold
-- ARGV[1]  lease (ms) to keep on the lock when holds remain
-- ARGV[2]  owner
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  unlock message ("0"), or "" to publish nothing (a SpinLock: its
--          waiters poll, nobody listens)
-- ARGV[5]  how long (ms) the latch is kept
-- ARGV[6]  "0" when the client did not believe it held the lock: a "not held"
--          answer then leaves no latch (lua/prelude/release_latch.lua)
-- Returns nil (caller is not the owner), 0 (still held, count decremented)
-- or 1 (released).
local seen = redis.call('get', KEYS[3])
if seen ~= false then
  return tonumber(seen)
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil then
  return not_held(KEYS[3], ARGV[5], ARGV[6])
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
-- PUBLISH before the first write: refused (an ACL), it leaves the hold as it
-- was rather than freed with nobody woken.
if ARGV[4] ~= '' then
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
