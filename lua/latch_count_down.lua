--@prelude latch_guard
-- Count a latch down by one (RCountDownLatch.countDown): the key is
-- decremented, deleted once the count is 0 or less, and the channel told "0"
-- when this call brought the count to exactly 0.
-- KEYS[1]  latch name (a string holding the count)
-- KEYS[2]  channel redisson_countdownlatch__channel__{NAME}; absent when
--          ARGV[3] is ""
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command ('publish' or 'spublish'), or "" when the channel
--          hashes to another cluster slot than the name: the caller publishes
-- ARGV[4]  the message "0"
-- Returns the count left: 0 when this call opened the latch, negative when it
-- was open already (nothing is kept then); an error reply starting with
-- WARDEN_WRONG_TYPE when the key is not a latch.
local refusal, count = latch_refusal(KEYS[1])
if refusal then
  return refusal
end
local left = (count or 0) - 1
-- PUBLISH before the write: refused (an ACL), it leaves the count as it was
-- rather than the latch open with nobody told.
if left == 0 and ARGV[3] ~= '' then
  redis.call(ARGV[3], KEYS[2], ARGV[4])
end
if left <= 0 then
  redis.call('del', KEYS[1])
else
  redis.call('decr', KEYS[1])
end
return left
