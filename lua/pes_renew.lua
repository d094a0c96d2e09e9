--@prelude server_clock
-- Extend many watchdog-kept permits of PermitExpirableSemaphores in one call
-- (the watchdog's batch, as lock_renew is for locks). Each live permit's
-- expiry becomes now + lease by the server's clock: no client time is sent,
-- so a client whose clock is wrong can neither shorten nor stretch it. An
-- expiry already later (set by update_lease_time elsewhere) is left as it is.
-- KEYS[i]    the permits of permit i's semaphore, {NAME}:timeout
-- ARGV[1]    lease in milliseconds
-- ARGV[i+1]  the id of permit i; "" for the same id as permit i-1
-- Returns an array: 1 for each permit extended, 0 for each that is gone
-- (expired, reclaimed, released by someone else, or the key is no ZSET).
-- An expired permit is not brought back: the next script of its semaphore
-- reclaims it.
local now = server_now_ms()
local expiry = now + tonumber(ARGV[1])
local result = {}
local id
for i = 1, #KEYS do
  if ARGV[i + 1] ~= '' then
    id = ARGV[i + 1]
  end
  -- pcall: a key of another type answers "gone" for its permit alone,
  -- instead of failing the whole batch.
  local score = redis.pcall('zscore', KEYS[i], id)
  if type(score) == 'string' and tonumber(score) > now then
    if tonumber(score) < expiry then
      redis.call('zadd', KEYS[i], 'xx', expiry, id)
    end
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
