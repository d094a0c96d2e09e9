--@prelude key_guard
-- Delete a read-write lock whoever holds it, if it is in the given mode:
-- read_lock().force_unlock() frees readers, write_lock().force_unlock() the
-- writer (with any read holds the writer has).
-- KEYS[1]  lock name
-- KEYS[2]  channel redisson_rwlock:{NAME}
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  message: "0" for read mode (only writers can be waiting), "1" for
--          write mode (readers and writers may be waiting: wake all)
-- ARGV[5]  mode to delete: "read" or "write"
-- ARGV[6]  "{NAME}" (or NAME when it has its own hash tag): read hold keys
--          are "<ARGV[6]>:<reader>:rwlock_timeout:<n>"
-- Returns 1 if there was a lock in that mode to delete, else 0; an error reply
-- starting with WARDEN_WRONG_TYPE (nothing deleted) when the key is not a
-- read-write lock.
local refusal = key_refusal(KEYS[1], 'rwlock')
if refusal then
  return refusal
end
if redis.call('hget', KEYS[1], 'mode') ~= ARGV[5] then
  return 0
end
-- PUBLISH before the first write: refused (an ACL), it leaves the lock as it was.
redis.call(ARGV[3], KEYS[2], ARGV[4])
-- The read holds' keys go too, rather than expiring later on their own.
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local field, count = fields[i], tonumber(fields[i + 1])
  if field ~= 'mode' and count ~= nil and string.sub(field, -6) ~= ':write' then
    for n = 1, count do
      redis.call('del', ARGV[6] .. ':' .. field .. ':rwlock_timeout:' .. n)
    end
  end
end
redis.call('del', KEYS[1])
return 1
