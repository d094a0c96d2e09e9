-- Delete a read-write lock whoever holds it, if it is in the given mode:
-- read_lock().force_unlock() frees readers, write_lock().force_unlock() the
-- writer (with any read holds the writer has).
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}
-- ARGV[1]  mode to delete: "read" or "write"
-- ARGV[2]  message: "0" for read mode (only writers can be waiting), "1" for
--          write mode (readers and writers may be waiting: wake all)
-- ARGV[3]  "{NAME}" (or NAME when it has its own hash tag): read hold keys
--          are "<ARGV[3]>:<reader>:rwlock_timeout:<n>"
-- Returns 1 if there was a lock in that mode to delete, else 0.
if redis.call('hget', KEYS[1], 'mode') ~= ARGV[1] then
  return 0
end
-- The read holds' keys go too, rather than expiring later on their own.
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field, count = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and count ~= nil and string.sub(field, -6) ~= ':write' then
    for n = 1, count do
      redis.call('del', ARGV[3] .. ':' .. field .. ':rwlock_timeout:' .. n)
    end
  end
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[2])
return 1
