--@prelude release_latch
-- Release one hold of a fair lock, idempotently, waking only the queue head.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock__channel:{NAME}; the head is woken on "<KEYS[2]>:<head id>"
-- KEYS[3]  redisson_lock_queue:{NAME}
-- KEYS[4]  redisson_lock_timeout:{NAME}
-- KEYS[5]  unlock latch: remembers this release's answer, "not held" too, so
--          that a release resent after a lost reply, or its first copy run
--          late, repeats its first answer
-- ARGV[1]  lease (ms) to keep on the lock when holds remain
-- ARGV[2]  owner
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  wake-up message ("0")
-- ARGV[5]  how long (ms) the latch is kept
-- ARGV[6]  "0" when the client did not believe it held the lock: a "not held"
--          answer then leaves no latch (lua/prelude/release_latch.lua)
-- Returns nil (caller is not the owner), 0 (still held, count decremented)
-- or 1 (released).
-- Gone waiters are dropped from the head first, as in fair_acquire.lua (see
-- there for what the deadlines mean), so that the wake-up reaches a live one.
-- Calls, nobody queued: five when it releases (HGET, TIME, LINDEX, SET of the
-- latch, DEL), six when it decrements (HINCRBY and PEXPIRE for the DEL); a
-- queued head adds its ZSCORE and the PUBLISH that wakes it.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil then
  -- A copy run after its first answer finds the hold gone: the latch says
  -- what that first answer was.
  local seen = redis.call('get', KEYS[5])
  if seen ~= false then
    return tonumber(seen)
  end
end
if redis.replicate_commands ~= nil then
  redis.replicate_commands()  -- Redis < 5: TIME before writes needs effects replication
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- Which waiters are gone, read before anything is written. Dropping a gone
-- head leaves the others' deadlines as they are (see fair_acquire.lua), so
-- each is gone once its own score has passed. The PUBLISH that wakes the new
-- head goes out before any write but the latch, which a refused PUBLISH (an
-- ACL) takes back: it leaves every key as it was.
local gone = 0
local head = false
while true do
  head = redis.call('lindex', KEYS[3], gone)
  if head == false then
    break
  end
  local deadline = tonumber(redis.call('zscore', KEYS[4], head))
  if deadline ~= nil and deadline > now then
    break
  end
  gone = gone + 1
end

local function wake_head()
  if head ~= false then
    redis.call(ARGV[3], KEYS[2] .. ':' .. head, ARGV[4])
  end
end

-- The same under pcall, after the latch is written: refused, it takes the
-- latch back and answers the refusal, so everything is as it was.
local function wake_head_or_undo()
  if head ~= false then
    local published = redis.pcall(ARGV[3], KEYS[2] .. ':' .. head, ARGV[4])
    if type(published) == 'table' and published.err ~= nil then
      redis.call('del', KEYS[5])
      return published
    end
  end
  return nil
end

local function drop_gone()
  for _ = 1, gone do
    local dropped = redis.call('lpop', KEYS[3])
    redis.call('zrem', KEYS[4], dropped)
  end
end

if count == nil then
  if redis.call('exists', KEYS[1]) == 0 then
    -- Gone already (the caller's lease ran out): nobody was told it is free.
    wake_head()
  end
  drop_gone()
  return not_held(KEYS[5], ARGV[5], ARGV[6])
end
-- The latch is written first, only if it is not there (NX): there, it holds
-- the answer of a copy of this release that ran before, and this copy repeats
-- it and changes nothing (the hold it found is the owner's next one).
local answer = count > 1 and 0 or 1
if not redis.call('set', KEYS[5], answer, 'nx', 'px', ARGV[5]) then
  return tonumber(redis.call('get', KEYS[5]))
end
if answer == 0 then
  drop_gone()
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
local refused = wake_head_or_undo()
if refused then
  return refused
end
drop_gone()
redis.call('del', KEYS[1])
return 1
