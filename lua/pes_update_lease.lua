--@prelude pes_guard server_clock reclaim
-- Give a held permit of a PermitExpirableSemaphore a new lease, from now by
-- the server's clock (Redisson's updateLeaseTime).
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}
-- KEYS[3]  its permits, {NAME}:timeout
-- ARGV[1]  the new lease in ms; "" for no expiry (922337203685477)
-- ARGV[2]  "" (no owner field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  the permit's id
-- Returns 1 when the permit is held (its lease now set), else 0.
local refusal, available = pes_refusal(KEYS[1], KEYS[3])
if refusal then
  return refusal
end
local now = server_now_ms()
reclaim_expired(KEYS[1], KEYS[3], KEYS[2], ARGV[3], now, available)
if redis.call('zscore', KEYS[3], ARGV[5]) == false then
  return 0
end
local expiry = 922337203685477
if ARGV[1] ~= '' then
  expiry = now + tonumber(ARGV[1])
end
redis.call('zadd', KEYS[3], 'xx', expiry, ARGV[5])
return 1
