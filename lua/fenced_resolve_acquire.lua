-- Settle a fenced-lock acquire attempt whose reply was lost: find out whether
-- it took effect and, if so, keep it (with a token) or take it back; if not,
-- make sure it never will. As lock_resolve_acquire.lua, plus the token.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel
-- KEYS[3]  redisson_lock_token:{NAME}
-- KEYS[4]  the attempt's cancel mark (see lock_acquire.lua)
-- ARGV[1]  owner
-- ARGV[2]  hold count the attempt would have produced
-- ARGV[3]  lease (ms) to keep when holds remain after a take-back
-- ARGV[4]  unlock message ("0")
-- ARGV[5]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[6]  how long (ms) the cancel mark is kept
-- ARGV[7]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- Returns 0 if the attempt had not taken effect (and now cannot); 1 if it
-- had and is now taken back; {1, token} if it had and is kept.
--
-- The token the attempt drew was lost with its reply. A kept hold draws a
-- new one instead: it is higher than every token handed out before, which is
-- all a fencing token has to be, and the lost one was never seen by anyone.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or count ~= tonumber(ARGV[2]) then
  redis.call('set', KEYS[4], 1, 'px', ARGV[6])
  return 0
end
if ARGV[5] == '1' then
  local token_type = redis.call('type', KEYS[3])['ok']
  if token_type ~= 'none' and (token_type ~= 'string' or
      string.match(redis.call('get', KEYS[3]), '^%d+$') == nil) then
    return redis.error_reply('WARDEN_WRONG_TYPE ' .. KEYS[3] .. ' is a ' .. token_type ..
      ' that is not a fencing token counter')
  end
  return {1, redis.call('incr', KEYS[3])}
end
-- Publish first: should it be refused, nothing has changed yet.
if count == 1 and redis.call('hlen', KEYS[1]) == 1 then
  redis.call(ARGV[7], KEYS[2], ARGV[4])
  redis.call('del', KEYS[1])
  return 1
end
if count > 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], -1)
  redis.call('pexpire', KEYS[1], ARGV[3])
else
  redis.call('hdel', KEYS[1], ARGV[1])
end
return 1
