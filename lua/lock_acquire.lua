-- Acquire (or re-enter) a re-entrant lock.
-- KEYS[1]  lock name: a hash of owner -> hold count
-- KEYS[2]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>.
--          The client sets it when it settles an attempt whose reply was lost
--          and finds it did not take effect; should the attempt still arrive
--          afterwards (it was in flight on a connection that dropped), it
--          must not take effect then: the client has already decided.
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner "<client-id>:<thread-id>"
-- Returns nil when the caller now holds the lock, else the lock's PTTL in ms:
-- how long the caller may have to wait.
if redis.call('exists', KEYS[2]) == 1 then
  return redis.error_reply('WARDEN_CANCELLED this acquire attempt was settled as not taken')
end
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
