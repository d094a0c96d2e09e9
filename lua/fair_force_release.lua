--@prelude key_guard
-- Delete a fair lock whoever holds it, and wake the queue head.
-- KEYS[1]  lock name
-- KEYS[2]  redisson_lock__channel:{NAME}; the head is woken on "<KEYS[2]>:<head id>"
-- KEYS[3]  redisson_lock_queue:{NAME}
-- KEYS[4]  redisson_lock_timeout:{NAME}
-- ARGV[1]  "" (no lease)
-- ARGV[2]  "" (no owner)
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  wake-up message ("0")
-- Returns 1 if there was a lock to delete, else 0; an error reply starting
-- with WARDEN_WRONG_TYPE (nothing changed) when the keys are not a fair lock.
-- Gone waiters are dropped from the head first, as in fair_acquire.lua (see
-- there for what the deadlines mean), so that the wake-up reaches a live one.
local refusal = key_refusal(KEYS[1], 'lock')
if refusal then
  return refusal
end
for _, aux in ipairs({{KEYS[3], 'list'}, {KEYS[4], 'zset'}}) do
  local aux_type = redis.call('type', aux[1])['ok']
  if aux_type ~= 'none' and aux_type ~= aux[2] then
    return redis.error_reply('WARDEN_WRONG_TYPE ' .. aux[1] .. ' is a ' .. aux_type .. ', not a fair lock\'s ' .. aux[2])
  end
end
if redis.replicate_commands ~= nil then
  redis.replicate_commands()  -- Redis < 5: TIME before writes needs effects replication
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

if redis.call('exists', KEYS[1]) == 0 then
  return 0
end

-- Which waiters are gone, read before anything is written. Dropping a gone
-- head leaves the others' deadlines as they are (see fair_acquire.lua), so
-- each is gone once its own score has passed.
local gone = 0
local head = false
while true do
  head = redis.call('lindex', KEYS[3], gone)
  if head == false then
    break
  end
  local deadline = tonumber(redis.call('zscore', KEYS[4], head))
  if deadline ~= nil and deadline > now then
    break
  end
  gone = gone + 1
end
-- PUBLISH before the first write: refused (an ACL), it leaves every key as it was.
if head ~= false then
  redis.call(ARGV[3], KEYS[2] .. ':' .. head, ARGV[4])
end
for _ = 1, gone do
  local dropped = redis.call('lpop', KEYS[3])
  redis.call('zrem', KEYS[4], dropped)
end
redis.call('del', KEYS[1])
return 1
