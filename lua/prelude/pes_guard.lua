-- The key-type guard of a PermitExpirableSemaphore: its count (a string
-- holding an integer, or no key: 0) and its ZSET of permit id -> expiry
-- (epoch ms), or no such key. Anything else is someone else's data, refused
-- before anything is written.
-- Returns the refusal (an error reply starting with WARDEN_WRONG_TYPE) or
-- nil, then the count it read.
local function pes_refusal(name, timeouts)
  -- GET under pcall: nothing, a string, or WRONGTYPE (only then asked its
  -- TYPE, for the refusal's words): one call where TYPE and GET were two.
  local available = 0
  local key_type = 'none'
  local value = redis.pcall('get', name)
  if type(value) == 'table' then
    key_type = redis.call('type', name)['ok']
  elseif value ~= false then
    if string.match(value, '^%-?%d+$') == nil then
      key_type = 'string that is not an integer'
    else
      available = tonumber(value)
    end
  end
  if key_type ~= 'none' then
    return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type ..
      ", not a permit-expirable semaphore's count of permits; nothing was changed"), nil
  end
  local zset_type = redis.call('type', timeouts)['ok']
  if zset_type ~= 'none' and zset_type ~= 'zset' then
    return redis.error_reply('WARDEN_WRONG_TYPE the key ' .. timeouts .. ' is a ' .. zset_type ..
      ", not a permit-expirable semaphore's sorted set of permits; nothing was changed"), nil
  end
  return nil, available
end
