--@prelude pes_guard
-- Settle a PermitExpirableSemaphore acquire whose reply was lost: did it take
-- its permit? Idempotent.
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}
-- KEYS[3]  its permits, {NAME}:timeout
-- KEYS[4]  the attempt's mark (see pes_acquire.lua)
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  the permit id the attempt used
-- ARGV[6]  "1": keep it; "0": give it back
-- ARGV[7]  how long (ms) the mark is kept
-- Returns 1 when the attempt had taken its permit (kept, or given back
-- now), 0 when it had not (and now never will).
local mark = redis.call('get', KEYS[4])
if mark == 'taken' then
  if ARGV[6] == '1' then
    return 1
  end
  local refusal = pes_refusal(KEYS[1], KEYS[3])
  if refusal then
    return refusal
  end
  if redis.call('zrem', KEYS[3], ARGV[5]) == 1 then
    local value = redis.call('incrby', KEYS[1], 1)
    redis.call(ARGV[3], KEYS[2], value)
  end
  redis.call('set', KEYS[4], 'returned', 'px', ARGV[7])
  return 1
end
if mark == 'returned' then
  return 1
end
redis.call('set', KEYS[4], 'cancelled', 'px', ARGV[7])
return 0
