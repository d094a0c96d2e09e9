--@prelude count_guard
-- Read, or drain, a Semaphore's available permits (Redisson's
-- availablePermits and drainPermits).
-- KEYS[1]  semaphore name
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  'read': the count, nothing written;
--          'drain': the count, which becomes 0 (a missing key stays missing)
-- Returns the count read (0 when there is no key).
local refusal, available = count_refusal(KEYS[1], 'semaphore')
if refusal then
  return refusal
end
if ARGV[3] == 'drain' and redis.call('exists', KEYS[1]) == 1 then
  redis.call('set', KEYS[1], 0)
end
return available
