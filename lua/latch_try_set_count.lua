--@prelude latch_guard
-- Set a latch's count if it has none (RCountDownLatch.trySetCount), and tell
-- the channel "1" (a new count: waiters that saw the latch open keep waiting).
-- KEYS[1]  latch name (a string holding the count)
-- KEYS[2]  channel redisson_countdownlatch__channel__{NAME}; absent when
--          ARGV[3] is ""
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command ('publish' or 'spublish'), or "" when the channel
--          hashes to another cluster slot than the name: the caller publishes
-- ARGV[4]  the message "1"
-- ARGV[5]  the count, > 0 (the caller checks it)
-- Returns 1 when the count was set, 0 when the latch had one already; an
-- error reply starting with WARDEN_WRONG_TYPE when the key is not a latch.
local refusal, count = latch_refusal(KEYS[1])
if refusal then
  return refusal
end
if count ~= nil then
  return 0
end
if ARGV[3] ~= '' then
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end
redis.call('set', KEYS[1], ARGV[5])
return 1
