--@prelude count_guard
-- Set or add to a Semaphore's permits, publishing the new count so that
-- waiters re-try (Redisson's trySetPermits and addPermits).
-- KEYS[1]  semaphore name
-- KEYS[2]  its channel, redisson_sc:{NAME}
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for shard channels
-- ARGV[4]  "" (the message is the new count)
-- ARGV[5]  permits (> 0)
-- ARGV[6]  'try_set': set them only when the key does not exist; returns
--          1 when set, 0 when the semaphore already had a count.
--          'add': add them to the count (a missing key counts 0); returns
--          the new count.
local refusal, available = count_refusal(KEYS[1], 'semaphore')
if refusal then
  return refusal
end
local permits = tonumber(ARGV[5])
if ARGV[6] == 'try_set' then
  if redis.call('exists', KEYS[1]) == 1 then
    return 0
  end
  redis.call('set', KEYS[1], permits)
  redis.call(ARGV[3], KEYS[2], permits)
  return 1
end
local value = available + permits
redis.call('set', KEYS[1], value)
redis.call(ARGV[3], KEYS[2], value)
return value
