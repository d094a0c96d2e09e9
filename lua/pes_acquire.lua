--@prelude cancel_check pes_guard server_clock reclaim
-- Take one permit of a PermitExpirableSemaphore, under a new permit id.
-- KEYS[1]  semaphore name: a string holding the free permits
-- KEYS[2]  its channel, redisson_sc:{NAME}, told the new count when expired
--          permits are reclaimed
-- KEYS[3]  its permits, {NAME}:timeout: a ZSET of permit id -> expiry (epoch ms)
-- KEYS[4]  this attempt's mark, warden_acquire_cancel:{NAME}:<attempt-id>
--          (see semaphore_acquire.lua)
-- ARGV[1]  the new permit's lease in ms; "" for a permit that never expires
--          (922337203685477, Redisson's "no expiry")
-- ARGV[2]  "" (no owner field: the permit id is ARGV[5])
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  the new permit's id (32 hex digits)
-- ARGV[6]  how long (ms) the mark is kept
-- Returns -1 when the permit was taken; else how many ms (by the server's
-- clock) until the earliest permit expires, or -2 when none will.
local refusal = cancel_refusal(KEYS[4])
if refusal then
  return refusal
end
local available
refusal, available = pes_refusal(KEYS[1], KEYS[3])
if refusal then
  return refusal
end
local now = server_now_ms()
available = reclaim_expired(KEYS[1], KEYS[3], KEYS[2], ARGV[3], now, available)
if available >= 1 then
  local expiry = 922337203685477
  if ARGV[1] ~= '' then
    expiry = now + tonumber(ARGV[1])
  end
  redis.call('decrby', KEYS[1], 1)
  redis.call('zadd', KEYS[3], expiry, ARGV[5])
  redis.call('set', KEYS[4], 'taken', 'px', ARGV[6])
  return -1
end
local first = redis.call('zrange', KEYS[3], 0, 0, 'withscores')
if first[1] == nil or tonumber(first[2]) >= 922337203685477 then
  return -2
end
return math.max(tonumber(first[2]) - now, 0)
