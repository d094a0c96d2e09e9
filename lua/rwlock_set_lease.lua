-- Give the holds of one owner of a read-write lock a new fixed lease.
-- KEYS[1]  lock name
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  field: "<owner>" for the read lock, "<owner>:write" for the write lock
-- ARGV[3]  "{NAME}" (or NAME when it has its own hash tag): read hold keys
--          are "<ARGV[3]>:<reader>:rwlock_timeout:<n>"
-- Returns 1 if the owner holds that lock (lease set), else 0.
-- A read hold's lease is its key's TTL; the hash then lives as long as the
-- longest read hold of anyone. A write hold's lease is the hash's TTL, kept
-- at least as long as the writer's own read holds.
local lease = tonumber(ARGV[1])
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil then
  return 0
end
local reader = string.sub(ARGV[2], -6) ~= ':write'
if reader then
  for n = 1, count do
    redis.call('set', ARGV[3] .. ':' .. ARGV[2] .. ':rwlock_timeout:' .. n, 1, 'px', lease)
  end
end
local longest = -2
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field, n = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and n ~= nil and string.sub(field, -6) ~= ':write' then
    for k = 1, n do
      longest = math.max(longest, redis.call('pttl', ARGV[3] .. ':' .. field .. ':rwlock_timeout:' .. k))
    end
  end
end
if reader and redis.call('hget', KEYS[1], 'mode') == 'write' then
  -- The writer is this same owner: its write hold keeps its own lease.
  longest = math.max(longest, redis.call('pttl', KEYS[1]))
elseif not reader then
  longest = math.max(longest, lease)
end
redis.call('pexpire', KEYS[1], longest)
return 1
