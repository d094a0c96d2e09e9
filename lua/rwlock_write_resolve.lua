--@prelude settle_record settle_check keep_hold
-- Settle a write acquire attempt whose reply was lost: find out whether it
-- took effect and, if so, keep it or take it back; if not, make sure it never
-- will. The client sends nothing else for this owner and lock until this has
-- answered, so the count it expects can only have come from the attempt.
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}
-- KEYS[3]  the attempt's cancel mark (see rwlock_write_acquire.lua)
-- ARGV[1]  the attempt's lease (ms): what a kept hold gets again (the hash
--          keeps a longer TTL, as on a write re-entry), and what a take-back
--          leaves when write holds remain
-- ARGV[2]  "<owner>:write" (the writer field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  message when the last write hold goes ("1")
-- ARGV[5]  hold count the lost acquire would have produced
-- ARGV[6]  "{NAME}" (or NAME when it has its own hash tag), as in rwlock_write_release.lua
-- ARGV[7]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[8]  how long (ms) the cancel mark is kept
-- Returns 1 if the attempt had taken effect (now kept or taken back), 0 if
-- it had not (and now cannot).
-- A copy of this settle that ran before it settled the attempt: answer as it did.
local earlier = settled_before(KEYS[3])
if earlier ~= nil then
  return earlier
end
local count = settled_count(KEYS[1], ARGV[2], ARGV[5], KEYS[3], ARGV[8])
if count == nil then
  return 0
end
if ARGV[7] == '1' then
  keep_hold(KEYS[1], ARGV[1], true)
  return 1
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  local ttl = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(ttl, tonumber(ARGV[1])))
  redis.call('set', KEYS[3], taken_back_mark, 'px', ARGV[8])
  return 1
end
-- As the last write release: the writer's own read holds keep the lock
-- read-locked. Read before any write.
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
redis.call('set', KEYS[3], taken_back_mark, 'px', ARGV[8])
return 1
