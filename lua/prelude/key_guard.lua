-- The key-type guard: a script touches only a lock's own hash. A key of
-- another type, or a hash that is not a lock of the kind asked for (someone
-- else's data, or a lock of the other kind), is refused before anything is
-- written.
--   kind 'lock'    a hash of owner -> hold count, without a field "mode"
--                  (Lock, FairLock, FencedLock, SpinLock)
--   kind 'rwlock'  the same with a field "mode" = "read" or "write"
-- One read in the everyday case: HGETALL under pcall answers the fields of a
-- hash, nothing for a key that does not exist (Redis keeps no empty hash) and
-- WRONGTYPE for any other type, which only then is asked its TYPE for the
-- refusal's words.
-- Returns the refusal (an error reply starting with WARDEN_WRONG_TYPE) or
-- nil, then what the guard read on the way, so that the caller need not read
-- it again: the key's type ('none' or 'hash'), its fields as HGETALL lists
-- them (nil when there is no key) and its mode ('' without one).
local function key_refusal(key, kind)
  local fields = redis.pcall('hgetall', key)
  local key_type = 'hash'
  local foreign = false
  local mode = nil
  if fields.err ~= nil then
    key_type = redis.call('type', key)['ok']
    foreign = true
  elseif #fields == 0 then
    return nil, 'none', nil, ''
  else
    for i = 1, #fields, 2 do
      if fields[i] == 'mode' then
        mode = fields[i + 1]
      elseif string.match(fields[i + 1], '^%d+$') == nil then
        foreign = true
      end
    end
    if kind == 'rwlock' then
      foreign = foreign or (mode ~= 'read' and mode ~= 'write')
    else
      foreign = foreign or mode ~= nil
    end
  end
  if foreign then
    return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ' that is not a ' ..
      (kind == 'rwlock' and 'read-write lock' or 'lock'))
  end
  return nil, key_type, fields, mode or ''
end
