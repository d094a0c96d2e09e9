-- Extend the leases of many read-write lock holds in one call (the
-- watchdog's batch). Read and write holds share this script.
-- KEYS[i]    lock name of hold i
-- ARGV[1]    lease in milliseconds
-- ARGV[i+1]  field of hold i: "<owner>" for a reader, "<owner>:write" for a
--            writer; "" for the same field as hold i-1
-- Returns an array: 1 for each hold extended, 0 for each hold that is no
-- longer there (the lock was lost).
-- A reader's hold keys "{NAME}:<owner>:rwlock_timeout:<n>" (n = 1..count)
-- get the lease again; only this owner's, other readers renew their own. The
-- hash is never shortened, since another owner's hold may outlast this lease.
local lease = tonumber(ARGV[1])
local result = {}
local field
for i = 1, #KEYS do
  if ARGV[i + 1] ~= '' then
    field = ARGV[i + 1]
  end
  local count = tonumber(redis.call('hget', KEYS[i], field))
  if count == nil then
    result[i] = 0
  else
    local ttl = redis.call('pttl', KEYS[i])
    redis.call('pexpire', KEYS[i], math.max(ttl, lease))
    if string.sub(field, -6) ~= ':write' then
      -- The name's hash tag as keys::tagged() writes it: the name itself when
      -- it has a non-empty tag by Redis's rule (text between its first '{'
      -- and the next '}'), else "{NAME}".
      local tagged = KEYS[i]
      local open = string.find(tagged, '{', 1, true)
      local close = open and string.find(tagged, '}', open + 1, true)
      if close == nil or close == open + 1 then
        tagged = '{' .. tagged .. '}'
      end
      for n = 1, count do
        -- SET rather than PEXPIRE: a hold still counted in the hash keeps its key.
        redis.call('set', tagged .. ':' .. field .. ':rwlock_timeout:' .. n, 1, 'px', lease)
      end
    end
    result[i] = 1
  end
end
return result
