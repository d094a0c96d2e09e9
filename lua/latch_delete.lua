--@prelude latch_guard
-- Delete a latch (RCountDownLatch.delete) and tell the channel "1".
-- KEYS[1]  latch name (a string holding the count)
-- KEYS[2]  channel redisson_countdownlatch__channel__{NAME}; absent when
--          ARGV[3] is ""
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command ('publish' or 'spublish'), or "" when the channel
--          hashes to another cluster slot than the name: the caller publishes
-- ARGV[4]  the message "1"
-- Returns 1 when there was a latch to delete, else 0; an error reply starting
-- with WARDEN_WRONG_TYPE when the key is not a latch (it is left alone).
local refusal, count = latch_refusal(KEYS[1])
if refusal then
  return refusal
end
if count == nil then
  return 0
end
if ARGV[3] ~= '' then
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end
redis.call('del', KEYS[1])
return 1
