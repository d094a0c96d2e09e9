-- Settle a fair-lock acquire attempt whose reply was lost: find out whether
-- it took effect and, if so, keep it or take it back; if not, make sure it
-- never will. The client sends nothing else for this owner and lock until
-- this has answered, so the count it expects can only have come from the attempt.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock_queue:{NAME}
-- KEYS[3]  redisson_lock__channel:{NAME}; the head is woken on "<KEYS[3]>:<head id>"
-- KEYS[4]  the attempt's cancel mark (see fair_acquire.lua)
-- ARGV[1]  owner
-- ARGV[2]  hold count the attempt would have produced
-- ARGV[3]  lease (ms) to keep when holds remain after a take-back
-- ARGV[4]  wake-up message ("0")
-- ARGV[5]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[6]  how long (ms) the cancel mark is kept
-- ARGV[7]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- Returns 1 if the attempt had taken effect (now kept or taken back), 0 if
-- it had not (and now cannot).
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or count ~= tonumber(ARGV[2]) then
  redis.call('set', KEYS[4], 1, 'px', ARGV[6])
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
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  redis.call('pexpire', KEYS[1], ARGV[3])
  return 1
end
if redis.call('hlen', KEYS[1]) == 1 then
  -- The lock is free again: wake the head first, so that a refused publish
  -- leaves everything as it was.
  local head = redis.call('lindex', KEYS[2], 0)
  if head ~= false then
    redis.call(ARGV[7], KEYS[3] .. ':' .. head, ARGV[4])
  end
  redis.call('del', KEYS[1])
  return 1
end
redis.call('hdel', KEYS[1], ARGV[1])
return 1
