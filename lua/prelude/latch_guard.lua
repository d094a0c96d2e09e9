-- The key-type guard of a count-down latch: its key is a string holding a
-- decimal integer (the layout of Redisson's RCountDownLatch). A key of
-- another type, or a string that is not a number, is someone else's data and
-- is refused before anything is written.
-- One call: GET under pcall answers nothing, a string, or WRONGTYPE for any
-- other type, which only then is asked its TYPE for the refusal's words.
-- Returns the refusal (an error reply starting with WARDEN_WRONG_TYPE) or
-- nil, then the count it read (nil when the key is absent).
local function latch_refusal(key)
  local text = redis.pcall('get', key)
  if text == false then
    return nil, nil
  end
  local key_type
  if type(text) == 'table' then
    key_type = redis.call('type', key)['ok']
  elseif string.match(text, '^%-?%d+$') ~= nil then
    return nil, tonumber(text)
  else
    key_type = 'string without a number'
  end
  return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ' that is not a count-down latch'), nil
end
