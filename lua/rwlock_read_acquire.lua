--@prelude cancel_check key_guard acquire_check
-- Take (or re-enter) the read lock of a read-write lock.
-- KEYS[1]  lock name: a hash with field "mode" ("read"/"write"), readers
--          "<owner>" -> hold count and the writer "<owner>:write" -> hold count
-- KEYS[2]  this reader's hold keys prefix, "{NAME}:<owner>:rwlock_timeout";
--          hold n lives in "<KEYS[2]>:<n>" with the hold's own lease
-- KEYS[3]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>
--          (see the cancel check)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner (the reader field)
-- ARGV[3]  "<owner>:write" (the field this owner has while it holds the write lock)
-- Returns nil when the caller now holds a read lock, else the lock's PTTL in
-- ms: how long the caller may have to wait.
-- Readers share; a write lock excludes other owners' readers but lets its own
-- holder read too (the first step of a downgrade).
-- Calls: a free lock six (EXISTS, HSET, HINCRBY, SET, PTTL, PEXPIRE), a
-- read-held one six (EXISTS, HGETALL, HINCRBY, SET, PTTL, PEXPIRE), a
-- write-held one three (EXISTS, HGETALL, PTTL).
local refusal, fields, mode = acquire_refusal(KEYS[1], KEYS[3], 'rwlock')
if refusal then
  return refusal
end
-- The guard read every field: whether this owner holds the write lock.
local writes = false
for i = 1, fields and #fields or 0, 2 do
  if fields[i] == ARGV[3] then
    writes = true
  end
end
if fields == nil or mode == 'read' or (mode == 'write' and writes) then
  if fields == nil then
    redis.call('hset', KEYS[1], 'mode', 'read')
  end
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
  -- The hash lives as long as its longest hold.
  local ttl = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(ttl, tonumber(ARGV[1])))
  return nil
end
return redis.call('pttl', KEYS[1])
