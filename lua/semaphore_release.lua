--@prelude count_guard
-- Give permits back to a Semaphore (Redisson's release: INCRBY and publish
-- the new count, with no owner check), once: a release re-sent after a lost
-- reply finds its latch and adds nothing again.
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}
-- KEYS[3]  this release's latch, warden_release_latch:{NAME}:<request-id>
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  permits to give back (> 0)
-- ARGV[6]  how long (ms) the latch is kept
-- ARGV[7]  optional: 'if_exists' (Redisson's releaseIfExists): a semaphore
--          whose key is missing is left missing
-- Returns the available count after the release; with 'if_exists', 1 when
-- released and 0 when the key was missing (the latch keeps that answer).
local seen = redis.call('get', KEYS[3])
if seen ~= false then
  return tonumber(seen)
end
local refusal = count_refusal(KEYS[1], 'semaphore')
if refusal then
  return refusal
end
local if_exists = ARGV[7] == 'if_exists'
if if_exists and redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[3], 0, 'px', ARGV[6])
  return 0
end
local value = redis.call('incrby', KEYS[1], ARGV[5])
redis.call(ARGV[3], KEYS[2], value)
local answer = if_exists and 1 or value
redis.call('set', KEYS[3], answer, 'px', ARGV[6])
return answer
