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
-- Calls: four when it releases or decrements (HGET, SET of the latch, then
-- HINCRBY and PEXPIRE, or PUBLISH and DEL); three for "not held" (HGET, GET
-- and SET of the latch).
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil then
  -- A copy run after its first answer finds the hold gone: the latch says
  -- what that first answer was.
  local seen = redis.call('get', KEYS[3])
  if seen ~= false then
    return tonumber(seen)
  end
  return not_held(KEYS[3], ARGV[5], ARGV[6])
end
local answer = count > 1 and 0 or 1
-- The latch is written first, only if it is not there (NX): there, it holds
-- the answer of a copy of this release that ran before, and this copy repeats
-- it and changes nothing (the hold it found is the owner's next one).
if not redis.call('set', KEYS[3], answer, 'nx', 'px', ARGV[5]) then
  return tonumber(redis.call('get', KEYS[3]))
end
if answer == 0 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
-- PUBLISH before the lock goes: refused (an ACL), it leaves the hold as it
-- was, and no latch, rather than freed with nobody woken.
if ARGV[4] ~= '' then
  local published = redis.pcall(ARGV[3], KEYS[2], ARGV[4])
  if type(published) == 'table' and published.err ~= nil then
    redis.call('del', KEYS[3])
    return published
  end
end
redis.call('del', KEYS[1])
return 1
