-- Acquire (or re-enter) a re-entrant lock.
-- KEYS[1]  lock name: a hash of owner -> hold count
-- KEYS[2]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>.
--          The client sets it when it settles an attempt whose reply was lost
--          and finds it did not take effect; should the attempt still arrive
--          afterwards (it was in flight on a connection that dropped), it
--          must not take effect then: the client has already decided.
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner "<client-id>:<thread-id>"
-- ARGV[3]  "0": a non-re-entrant lock, whose owner asking again is refused;
--          anything else (or absent): re-entrant
-- Returns nil when the caller now holds the lock, else the lock's PTTL in ms:
-- how long the caller may have to wait; an error reply starting with
-- WARDEN_WOULD_DEADLOCK when the owner already holds a non-re-entrant lock.
if redis.call('exists', KEYS[2]) == 1 then
  return redis.error_reply('WARDEN_CANCELLED this acquire attempt was settled as not taken')
end
-- Only a lock's own hash is touched: a key of another type, a read-write
-- lock's hash (it has "mode") or a hash whose values are not hold counts is
-- refused before anything is written. The checks ride on what the decision
-- needs anyway (TYPE, and the fields when the lock is held), so a free lock
-- costs four calls and a held one four: a woken waiter's retry is on the path
-- of every hand-off.
local key_type = redis.call('type', KEYS[1])['ok']
if key_type == 'none' then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local foreign = key_type ~= 'hash'
local mine = false
if not foreign then
  local fields = redis.call('hgetall', KEYS[1])
  for i = 1, #fields, 2 do
    if fields[i] == 'mode' or string.match(fields[i + 1], '^%d+$') == nil then
      foreign = true
    elseif fields[i] == ARGV[2] then
      mine = true
    end
  end
end
if foreign then
  return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ' that is not a lock')
end
if mine then
  if ARGV[3] == '0' then
    return redis.error_reply('WARDEN_WOULD_DEADLOCK owner ' .. ARGV[2] ..
      ' already holds this non-re-entrant lock; asking again would wait for itself for ever')
  end
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
