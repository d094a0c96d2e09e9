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
-- ARGV[4]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- Returns 1 if there was a lock in that mode to delete, else 0; an error reply
-- starting with WARDEN_WRONG_TYPE (nothing deleted) when the key is not a
-- read-write lock.
-- Only a read-write lock's own hash is touched: a key of another type, or a
-- hash without a "read"/"write" mode or with values that are not hold counts
-- (a plain lock, someone else's data) is refused before anything is written.
local key_type = redis.call('type', KEYS[1])['ok']
if key_type ~= 'none' then
  local foreign = key_type ~= 'hash'
  if not foreign then
    local fields = redis.call('hgetall', KEYS[1])
    local found_mode = nil
    for i = 1, #fields, 2 do
      if fields[i] == 'mode' then
        found_mode = fields[i + 1]
      elseif string.match(fields[i + 1], '^%d+$') == nil then
        foreign = true
      end
    end
    foreign = foreign or (found_mode ~= 'read' and found_mode ~= 'write')
  end
  if foreign then
    return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ' that is not a read-write lock')
  end
end
if redis.call('hget', KEYS[1], 'mode') ~= ARGV[1] then
  return 0
end
-- PUBLISH before the first write: refused (an ACL), it leaves the lock as it was.
redis.call(ARGV[4], KEYS[2], ARGV[2])
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
return 1
