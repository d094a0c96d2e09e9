-- Take back a read acquire whose reply was lost and whose caller has given
-- up, so that it cannot leave an orphan hold. Acts only if the reader's hold
-- count is exactly what the lost acquire would have made it.
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}
-- KEYS[3]  this reader's hold keys prefix, "{NAME}:<owner>:rwlock_timeout"
-- ARGV[1]  owner (the reader field)
-- ARGV[2]  hold count the lost acquire would have produced
-- ARGV[3]  unlock message ("0")
-- ARGV[4]  "{NAME}" (or NAME when it has its own hash tag), as in rwlock_read_release.lua
-- Returns 1 if a hold was taken back, else 0.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or count ~= tonumber(ARGV[2]) then
  return 0
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
else
  redis.call('hdel', KEYS[1], ARGV[1])
end
redis.call('del', KEYS[3] .. ':' .. count)

-- As a release: the hash lives as long as the longest read hold left.
local longest = -2
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field, n = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and n ~= nil and string.sub(field, -6) ~= ':write' then
    for k = 1, n do
      longest = math.max(longest, redis.call('pttl', ARGV[4] .. ':' .. field .. ':rwlock_timeout:' .. k))
    end
  end
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'write' then
  if longest > 0 then
    redis.call('pexpire', KEYS[1], math.max(longest, redis.call('pttl', KEYS[1])))
  end
elseif longest > 0 then
  redis.call('pexpire', KEYS[1], longest)
else
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], ARGV[3])
end
return 1
