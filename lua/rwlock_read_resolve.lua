--@prelude settle_record settle_check keep_hold
-- Settle a read acquire attempt whose reply was lost: find out whether it
-- took effect and, if so, keep it or take it back; if not, make sure it never
-- will. The client sends nothing else for this owner and lock until this has
-- answered, so the count it expects can only have come from the attempt.
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}
-- KEYS[3]  this reader's hold keys prefix, "{NAME}:<owner>:rwlock_timeout"
-- KEYS[4]  the attempt's cancel mark (see rwlock_read_acquire.lua)
-- ARGV[1]  the attempt's lease (ms): what a kept hold's own key gets again (the
--          hash keeps a longer TTL, as on a read acquire)
-- ARGV[2]  owner (the reader field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  unlock message ("0")
-- ARGV[5]  hold count the lost acquire would have produced
-- ARGV[6]  "{NAME}" (or NAME when it has its own hash tag), as in rwlock_read_release.lua
-- ARGV[7]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[8]  how long (ms) the cancel mark is kept
-- Returns 1 if the attempt had taken effect (now kept or taken back), 0 if
-- it had not (and now cannot).
-- A copy of this settle that ran before it settled the attempt: answer as it did.
local earlier = settled_before(KEYS[4])
if earlier ~= nil then
  return earlier
end
local count = settled_count(KEYS[1], ARGV[2], ARGV[5], KEYS[4], ARGV[8])
if count == nil then
  return 0
end
if ARGV[7] == '1' then
  redis.call('set', KEYS[3] .. ':' .. count, 1, 'px', ARGV[1])
  keep_hold(KEYS[1], ARGV[1], true)
  return 1
end
-- The longest TTL among the read holds that remain (this reader's hold
-- number `count` is the one going), read before any write.
local longest = -2
local fields = redis.call('hgetall', KEYS[1])
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
local mode = redis.call('hget', KEYS[1], 'mode')

-- PUBLISH before the first write: refused (an ACL), it leaves the lock as it was.
if mode ~= 'write' and longest <= 0 then
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
else
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. count)

-- As a release: the hash lives as long as the longest read hold left.
if mode == 'write' then
  if longest > 0 then
    redis.call('pexpire', KEYS[1], math.max(longest, redis.call('pttl', KEYS[1])))
  end
elseif longest > 0 then
  redis.call('pexpire', KEYS[1], longest)
else
  redis.call('del', KEYS[1])
end
redis.call('set', KEYS[4], taken_back_mark, 'px', ARGV[8])
return 1
