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
-- ARGV[5]  'available': the free count; 'acquired': the permits held;
--          'lease_time': the time left on permit ARGV[6] (Redisson's
--          getLeaseTime): ms left, -1 for a permit that never expires, -2
--          when no such permit is held
-- ARGV[6]  the permit's id, for 'lease_time'
local refusal, available = pes_refusal(KEYS[1], KEYS[3])
if refusal then
  return refusal
end
local now = server_now_ms()
available = reclaim_expired(KEYS[1], KEYS[3], KEYS[2], ARGV[3], now, available)
if ARGV[5] == 'acquired' then
  return redis.call('zcard', KEYS[3])
end
if ARGV[5] == 'lease_time' then
  local expiry = redis.call('zscore', KEYS[3], ARGV[6])
  if expiry == false then
    return -2
  end
  if tonumber(expiry) >= 922337203685477 then
    return -1
  end
  return tonumber(expiry) - now
end
return available
