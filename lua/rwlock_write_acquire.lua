-- Take (or re-enter) the write lock of a read-write lock.
-- KEYS[1]  lock name: a hash with field "mode" ("read"/"write"), readers
--          "<owner>" -> hold count and the writer "<owner>:write" -> hold count
-- KEYS[2]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>.
--          The client sets it when it settles an attempt whose reply was lost
--          and finds it did not take effect; should the attempt still arrive
--          afterwards (it was in flight on a connection that dropped), it
--          must not take effect then: the client has already decided.
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  "<owner>:write" (the writer field)
-- ARGV[3]  owner (its reader field)
-- Returns nil when the caller now holds the write lock, else the lock's PTTL
-- in ms: how long the caller may have to wait; an error reply starting with
-- WARDEN_WOULD_DEADLOCK when waiting could never end.
if redis.call('exists', KEYS[2]) == 1 then
  return redis.error_reply('WARDEN_CANCELLED this acquire attempt was settled as not taken')
end
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
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  -- Never shorter than the writer's own read holds, if it has any.
  local ttl = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(ttl, tonumber(ARGV[1])))
  return nil
end
-- An upgrade: this owner reads, so the write lock waits for it, and it waits
-- for the write lock. Say so instead of waiting for ever.
if redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
  return redis.error_reply('WARDEN_WOULD_DEADLOCK owner ' .. ARGV[3] ..
    ' holds the read lock and asked for the write lock; an upgrade would wait for itself for ever' ..
    ' (release the read lock first)')
end
return redis.call('pttl', KEYS[1])
