--@prelude pes_guard server_clock reclaim
-- Read a PermitExpirableSemaphore's free or held permits, after reclaiming
-- the expired ones.
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}
-- KEYS[3]  its permits, {NAME}:timeout
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  'available': the free count; 'acquired': the permits held
local refusal, available = pes_refusal(KEYS[1], KEYS[3])
if refusal then
  return refusal
end
available = reclaim_expired(KEYS[1], KEYS[3], KEYS[2], ARGV[3], server_now_ms(), available)
if ARGV[5] == 'acquired' then
  return redis.call('zcard', KEYS[3])
end
return available
