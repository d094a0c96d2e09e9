--@prelude count_guard
-- Settle a Semaphore acquire attempt whose reply was lost: did it take its
-- permits? Idempotent, so it may be re-sent after a lost reply of its own.
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}, told the new available count
--          when permits are given back
-- KEYS[3]  the attempt's mark (see semaphore_acquire.lua)
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  permits the attempt asked for
-- ARGV[6]  "1": keep what it took (the caller still wants it); "0": give it back
-- ARGV[7]  how long (ms) the mark is kept
-- Returns 1 when the attempt had taken its permits (kept, or given back
-- now), 0 when it had not (and now never will: the mark refuses it).
local mark = redis.call('get', KEYS[3])
if mark == 'taken' then
  if ARGV[6] == '1' then
    return 1
  end
  local refusal = count_refusal(KEYS[1], 'semaphore')
  if refusal then
    return refusal
  end
  local value = redis.call('incrby', KEYS[1], ARGV[5])
  redis.call(ARGV[3], KEYS[2], value)
  redis.call('set', KEYS[3], 'returned', 'px', ARGV[7])
  return 1
end
if mark == 'returned' then
  return 1
end
redis.call('set', KEYS[3], 'cancelled', 'px', ARGV[7])
return 0
