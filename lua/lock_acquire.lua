--@prelude cancel_check key_guard acquire_check
-- Acquire (or re-enter) a re-entrant lock.
-- KEYS[1]  lock name: a hash of owner -> hold count
-- KEYS[2]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>
--          (see the cancel check)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner "<client-id>:<thread-id>"
-- ARGV[3]  "0": a non-re-entrant lock, whose owner asking again is refused;
--          anything else (or absent): re-entrant
-- Returns nil when the caller now holds the lock, else the lock's PTTL in ms:
-- how long the caller may have to wait; an error reply starting with
-- WARDEN_WOULD_DEADLOCK when the owner already holds a non-re-entrant lock.
-- Calls: a free lock three (EXISTS, HINCRBY, PEXPIRE), a held one three
-- (EXISTS, HGETALL, PTTL), a re-entry four: a woken waiter's retry is on the
-- path of every hand-off.
local refusal, fields = acquire_refusal(KEYS[1], KEYS[2], 'lock')
if refusal then
  return refusal
end
local mine = fields == nil
for i = 1, fields and #fields or 0, 2 do
  if fields[i] == ARGV[2] then
    mine = true
    if ARGV[3] == '0' then
      return redis.error_reply('WARDEN_WOULD_DEADLOCK owner ' .. ARGV[2] ..
        ' already holds this non-re-entrant lock; asking again would wait for itself for ever')
    end
  end
end
if mine then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
