--@prelude cancel_check key_guard acquire_check
-- Take (or re-enter) the write lock of a read-write lock.
-- KEYS[1]  lock name: a hash with field "mode" ("read"/"write"), readers
--          "<owner>" -> hold count and the writer "<owner>:write" -> hold count
-- KEYS[2]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>
--          (see the cancel check)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  "<owner>:write" (the writer field)
-- ARGV[3]  owner (its reader field)
-- Returns nil when the caller now holds the write lock, else the lock's PTTL
-- in ms: how long the caller may have to wait; an error reply starting with
-- WARDEN_WOULD_DEADLOCK when waiting could never end.
-- Calls: a free lock four (EXISTS, two HSETs, PEXPIRE), a held one three
-- (EXISTS, HGETALL, PTTL), a re-entry five (EXISTS, HGETALL, HINCRBY, PTTL,
-- PEXPIRE).
local refusal, fields, mode = acquire_refusal(KEYS[1], KEYS[2], 'rwlock')
if refusal then
  return refusal
end
-- The guard read every field: whether this owner writes or reads already.
local writes, reads = false, false
for i = 1, fields and #fields or 0, 2 do
  if fields[i] == ARGV[2] then
    writes = true
  elseif fields[i] == ARGV[3] then
    reads = true
  end
end
if fields == nil then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and writes then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  -- Never shorter than the writer's own read holds, if it has any.
  local ttl = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(ttl, tonumber(ARGV[1])))
  return nil
end
-- An upgrade: this owner reads, so the write lock waits for it, and it waits
-- for the write lock. Say so instead of waiting for ever.
if reads then
  return redis.error_reply('WARDEN_WOULD_DEADLOCK owner ' .. ARGV[3] ..
    ' holds the read lock and asked for the write lock; an upgrade would wait for itself for ever' ..
    ' (release the read lock first)')
end
return redis.call('pttl', KEYS[1])
