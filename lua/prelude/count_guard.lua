-- The key-type guard of a synchronizer whose key is a count (a Semaphore's
-- available permits): a string holding an integer, or no key at all (a count
-- of 0, as Redisson reads it). Any other key is someone else's data and is
-- refused before anything is written.
-- One call: GET under pcall answers nothing, a string, or WRONGTYPE for any
-- other type, which only then is asked its TYPE for the refusal's words.
-- Returns the refusal (an error reply starting with WARDEN_WRONG_TYPE) or
-- nil, then the count it read (0 when there is no key).
local function count_refusal(key, what)
  local value = redis.pcall('get', key)
  if value == false then
    return nil, 0
  end
  local key_type
  if type(value) == 'table' then
    key_type = redis.call('type', key)['ok']
  elseif string.match(value, '^%-?%d+$') ~= nil then
    return nil, tonumber(value)
  else
    key_type = 'string that is not an integer'
  end
  return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ', not a ' .. what ..
    "'s count of permits; nothing was changed"), nil
end
