--@prelude settle_record settle_check keep_hold take_back
-- Settle a fenced-lock acquire attempt whose reply was lost: find out whether
-- it took effect and, if so, keep it (with a token) or take it back; if not,
-- make sure it never will. As lock_resolve_acquire.lua, plus the token.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel
-- KEYS[3]  redisson_lock_token:{NAME}
-- KEYS[4]  the attempt's cancel mark (see lock_acquire.lua)
-- ARGV[1]  the attempt's lease (ms): what a kept hold gets again, and what a
--          take-back leaves when holds remain
-- ARGV[2]  owner
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  unlock message ("0")
-- ARGV[5]  hold count the attempt would have produced
-- ARGV[6]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[7]  how long (ms) the cancel mark is kept
-- Returns 0 if the attempt had not taken effect (and now cannot); 1 if it
-- had and is now taken back; {1, token} if it had and is kept.
--
-- The token the attempt drew was lost with its reply. A kept hold draws a
-- new one instead: it is higher than every token handed out before, which is
-- all a fencing token has to be, and the lost one was never seen by anyone.
-- A copy of this settle that ran before it settled the attempt: answer as it did.
local earlier = settled_before(KEYS[4])
if earlier ~= nil then
  return earlier
end
local count = settled_count(KEYS[1], ARGV[2], ARGV[5], KEYS[4], ARGV[7])
if count == nil then
  return 0
end
if ARGV[6] == '1' then
  local token_type = redis.call('type', KEYS[3])['ok']
  if token_type ~= 'none' and (token_type ~= 'string' or
      string.match(redis.call('get', KEYS[3]), '^%d+$') == nil) then
    return redis.error_reply('WARDEN_WRONG_TYPE ' .. KEYS[3] .. ' is a ' .. token_type ..
      ' that is not a fencing token counter')
  end
  keep_hold(KEYS[1], ARGV[1])
  return {1, redis.call('incr', KEYS[3])}
end
take_back(KEYS[1], ARGV[2], count, ARGV[1], function()
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end)
redis.call('set', KEYS[4], taken_back_mark, 'px', ARGV[7])
return 1
