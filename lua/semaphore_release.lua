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
-- Returns the available count after the release.
local seen = redis.call('get', KEYS[3])
if seen ~= false then
  return tonumber(seen)
end
local refusal = count_refusal(KEYS[1], 'semaphore')
if refusal then
  return refusal
end
local value = redis.call('incrby', KEYS[1], ARGV[5])
redis.call(ARGV[3], KEYS[2], value)
redis.call('set', KEYS[3], value, 'px', ARGV[6])
return value
