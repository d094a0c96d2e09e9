--@prelude key_guard
-- Read what the queries of a lock report (is_locked, hold_count, TTL), after
-- checking that the key is a lock of the asking kind. Writes nothing.
-- KEYS[1]  lock name
-- ARGV[1]  "" (no lease)
-- ARGV[2]  the hash field whose hold count is wanted
-- ARGV[3]  "lock" (a hash of owner -> hold count; Lock and FairLock) or
--          "rwlock" (the same with a field "mode" = "read"/"write")
-- Returns {pttl, hold count of ARGV[2], mode}: pttl -2 when there is no lock
-- (count 0, mode ""); an error reply starting with WARDEN_WRONG_TYPE when the
-- key is not a lock of that kind.
local refusal, key_type, _, mode = key_refusal(KEYS[1], ARGV[3])
if refusal then
  return refusal
end
if key_type == 'none' then
  return {-2, 0, ''}
end
return {redis.call('pttl', KEYS[1]), tonumber(redis.call('hget', KEYS[1], ARGV[2])) or 0, mode}
