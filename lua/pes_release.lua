--@prelude pes_guard server_clock reclaim
-- Release one permit of a PermitExpirableSemaphore by its id.
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}, told the new count
-- KEYS[3]  its permits, {NAME}:timeout
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner field)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  the permit's id
-- ARGV[6]  optional: 'lock_reply' answers as a lock's release does (nil
--          instead of 0 or -1): Client::close releases watchdog-kept permits
--          as it releases lock holds
-- Returns 1 when released; 0 when no such permit is held; -1 when it was
-- held but its lease had run out (it is reclaimed now, as any expired one).
local refusal, available = pes_refusal(KEYS[1], KEYS[3])
if refusal then
  return refusal
end
local now = server_now_ms()
local expiry = redis.call('zscore', KEYS[3], ARGV[5])
reclaim_expired(KEYS[1], KEYS[3], KEYS[2], ARGV[3], now, available)
if expiry == false or tonumber(expiry) <= now then
  if ARGV[6] == 'lock_reply' then
    return false
  end
  if expiry == false then
    return 0
  end
  return -1
end
redis.call('zrem', KEYS[3], ARGV[5])
local value = redis.call('incrby', KEYS[1], 1)
redis.call(ARGV[3], KEYS[2], value)
return 1
