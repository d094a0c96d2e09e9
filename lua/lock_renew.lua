-- Extend the leases of many holds in one call (the watchdog's batch).
-- KEYS[i]    lock name of hold i
-- ARGV[1]    lease in milliseconds
-- ARGV[i+1]  owner of hold i; "" for the same owner as hold i-1
-- Returns an array: 1 for each hold extended, 0 for each hold that is no
-- longer there (the lock was lost).
local result = {}
local owner
for i = 1, #KEYS do
  if ARGV[i + 1] ~= '' then
    owner = ARGV[i + 1]
  end
  if redis.call('hexists', KEYS[i], owner) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
