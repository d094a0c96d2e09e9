--@prelude pes_guard server_clock reclaim
-- Set a PermitExpirableSemaphore's permits (Redisson's setPermits and
-- trySetPermits).
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}
-- KEYS[3]  its permits, {NAME}:timeout
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  permits (> 0)
-- ARGV[6]  'try_set': only when the semaphore has no count yet (1 set, 0 not);
--          'set': make free + held = permits, changing the free count (1)
local refusal, available = pes_refusal(KEYS[1], KEYS[3])
if refusal then
  return refusal
end
local permits = tonumber(ARGV[5])
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], permits)
  redis.call(ARGV[3], KEYS[2], permits)
  return 1
end
if ARGV[6] == 'try_set' then
  return 0
end
available = reclaim_expired(KEYS[1], KEYS[3], KEYS[2], ARGV[3], server_now_ms(), available)
local held = redis.call('zcard', KEYS[3])
if available + held ~= permits then
  local value = redis.call('incrby', KEYS[1], permits - available - held)
  if value > 0 then
    redis.call(ARGV[3], KEYS[2], value)
  end
end
return 1
