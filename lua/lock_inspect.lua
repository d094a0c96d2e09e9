-- Read what the queries of a lock report (is_locked, hold_count, TTL), after
-- checking that the key is a lock of the asking kind. Writes nothing.
-- KEYS[1]  lock name
-- ARGV[1]  "lock" (a hash of owner -> hold count; Lock and FairLock) or
--          "rwlock" (the same with a field "mode" = "read"/"write")
-- ARGV[2]  the hash field whose hold count is wanted
-- Returns {pttl, hold count of ARGV[2], mode}: pttl -2 when there is no lock
-- (count 0, mode ""); an error reply starting with WARDEN_WRONG_TYPE when the
-- key is not a lock of that kind.
local key_type = redis.call('type', KEYS[1])['ok']
if key_type == 'none' then
  return {-2, 0, ''}
end
local foreign = key_type ~= 'hash'
local mode = ''
if not foreign then
  local fields = redis.call('hgetall', KEYS[1])
  for i = 1, #fields, 2 do
    if fields[i] == 'mode' then
      mode = fields[i + 1]
    elseif string.match(fields[i + 1], '^%d+$') == nil then
      foreign = true
    end
  end
  if ARGV[1] == 'rwlock' then
    foreign = foreign or (mode ~= 'read' and mode ~= 'write')
  else
    foreign = foreign or mode ~= ''
  end
end
if foreign then
  return redis.error_reply('WARDEN_WRONG_TYPE the key is a ' .. key_type .. ' that is not a ' ..
    (ARGV[1] == 'rwlock' and 'read-write lock' or 'lock'))
end
return {redis.call('pttl', KEYS[1]), tonumber(redis.call('hget', KEYS[1], ARGV[2])) or 0, mode}
