--@prelude cancel_check key_guard acquire_check
-- Acquire (or re-enter) a fenced lock and draw the hold's fencing token.
-- KEYS[1]  lock name: a hash of owner -> hold count (as a plain lock)
-- KEYS[2]  redisson_lock_token:{NAME}: the token counter (a string holding a
--          non-negative integer, no expiry), shared by every holder
-- KEYS[3]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>
--          (see the cancel check)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner "<client-id>:<thread-id>"
-- Returns {-1, token} when the caller now holds the lock (token: the
-- counter's new value, >= 1), else {pttl, -1}: the lock's PTTL in ms (-1: it
-- has no expiry). Every acquire draws a token, re-entries included.
-- Calls: a free lock five (EXISTS, GET, INCR, HINCRBY, PEXPIRE), a held one
-- four (EXISTS, HGETALL, GET, PTTL).
-- Only a lock's own hash and a token counter are touched: anything else is
-- refused before the first write.
local refusal, fields = acquire_refusal(KEYS[1], KEYS[3], 'lock')
if refusal then
  return refusal
end
-- GET under pcall reads the counter and its type at once: nothing, a string,
-- or WRONGTYPE for any other type (only then asked its TYPE, for the words).
local token = redis.pcall('get', KEYS[2])
local token_type = 'string'
if type(token) == 'table' then
  token_type = redis.call('type', KEYS[2])['ok']
end
-- A negative counter would make a token of -1, which reads as "not acquired".
if token ~= false and (token_type ~= 'string' or string.match(token, '^%d+$') == nil) then
  return redis.error_reply('WARDEN_WRONG_TYPE ' .. KEYS[2] .. ' is a ' .. token_type ..
    ' that is not a fencing token counter')
end
local mine = fields == nil
for i = 1, fields and #fields or 0, 2 do
  if fields[i] == ARGV[2] then
    mine = true
  end
end
if mine then
  -- INCR first: should it fail (a counter at the top of the 64-bit range),
  -- nothing has been written.
  local drawn = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, drawn}
end
return {redis.call('pttl', KEYS[1]), -1}
