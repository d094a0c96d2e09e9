-- Settle an acquire attempt whose reply was lost: find out whether it took
-- effect and, if so, keep it or take it back; if not, make sure it never will.
-- The client sends nothing else for this owner and lock until this has
-- answered, so the count it expects can only have come from the attempt.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel
-- KEYS[3]  the attempt's cancel mark (see lock_acquire.lua)
-- ARGV[1]  owner
-- ARGV[2]  hold count the attempt would have produced
-- ARGV[3]  lease (ms) to keep when holds remain after a take-back
-- ARGV[4]  unlock message ("0"), or "" to publish nothing (SpinLock)
-- ARGV[5]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[6]  how long (ms) the cancel mark is kept
-- ARGV[7]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- Returns 1 if the attempt had taken effect (now kept or taken back), 0 if
-- it had not (and now cannot).
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or count ~= tonumber(ARGV[2]) then
  redis.call('set', KEYS[3], 1, 'px', ARGV[6])
  return 0
end
if ARGV[5] == '1' then
  -- Kept: rewrite its expiry as it stands, a write that changes nothing, so
  -- that a WAIT after this script (Config::replica_sync) covers the hold,
  -- whichever connection the attempt wrote it on.
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then
    redis.call('pexpire', KEYS[1], ttl)
  end
  return 1
end
-- Publish first: should it be refused, nothing has changed yet.
if count == 1 and redis.call('hlen', KEYS[1]) == 1 then
  if ARGV[4] ~= '' then
    redis.call(ARGV[7], KEYS[2], ARGV[4])
  end
  redis.call('del', KEYS[1])
  return 1
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  redis.call('pexpire', KEYS[1], ARGV[3])
else
  redis.call('hdel', KEYS[1], ARGV[1])
end
return 1
