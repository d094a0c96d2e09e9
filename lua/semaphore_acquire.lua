--@prelude cancel_check count_guard
-- Take permits of a Semaphore if enough are available (Redisson's
-- tryAcquire: the key holds the available count, a missing key counts 0).
-- KEYS[1]  semaphore name: a string holding the available permits
-- KEYS[2]  this attempt's mark, warden_acquire_cancel:{NAME}:<attempt-id>:
--          set to 'taken' when the attempt takes its permits, so that a
--          client whose reply was lost can ask what happened
--          (semaphore_settle.lua); set by the settle when it had not run
--          (see the cancel check)
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  permits to take (> 0)
-- ARGV[4]  how long (ms) the mark is kept
-- Returns 1 when the permits were taken, else 0 (Redisson's boolean).
local refusal = cancel_refusal(KEYS[2])
if refusal then
  return refusal
end
local available
refusal, available = count_refusal(KEYS[1], 'semaphore')
if refusal then
  return refusal
end
local wanted = tonumber(ARGV[3])
if available < wanted then
  return 0
end
redis.call('decrby', KEYS[1], wanted)
redis.call('set', KEYS[2], 'taken', 'px', ARGV[4])
return 1
