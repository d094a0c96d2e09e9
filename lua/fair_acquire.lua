--@prelude cancel_check key_guard acquire_check
-- Acquire (or re-enter) a fair lock; if it cannot be taken, join its queue
-- or, already queued, refresh this waiter's deadline.
-- KEYS[1]  lock name: a hash of owner -> hold count (as a plain lock)
-- KEYS[2]  redisson_lock__channel:{NAME} a waiter is woken on "<KEYS[2]>:<waiter id>"
-- KEYS[3]  redisson_lock_queue:{NAME}    list of waiter ids, head first
-- KEYS[4]  redisson_lock_timeout:{NAME}  zset of waiter id -> deadline (epoch ms)
-- KEYS[5]  this attempt's cancel mark, warden_acquire_cancel:{NAME}:<attempt-id>
--          (see the cancel check)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner "<client-id>:<thread-id>", which is also its waiter id
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  wake-up message ("0")
-- ARGV[5]  W, the fair-lock wait timeout in milliseconds
-- ARGV[6]  "1": join the queue when the lock cannot be taken; "0": a single
--          attempt (the caller will not wait), the queue is left as it is
-- ARGV[7]  "0": a non-re-entrant lock, whose owner asking again is refused;
--          anything else (or absent): re-entrant
-- Returns nil when the caller now holds the lock, else how many ms to wait
-- before trying again unless woken first; an error reply starting with
-- WARDEN_WOULD_DEADLOCK when the owner already holds a non-re-entrant lock.
--
-- Only the head of the queue may take a free lock (or anyone, when nobody
-- waits); a release wakes the head alone, on its own channel.
--
-- Deadlines. A waiter's score is the time after which it counts as gone.
-- warden's waiters write theirs at each attempt as
--   (time of the attempt) + (its position in the queue, from 1) * W,
-- and the reply never asks them to wait longer than W/3, so a waiter that is
-- alive keeps its place however long it waits. Redisson's waiters write theirs
-- once, when they join: the score of the waiter ahead (or the lock's TTL from
-- now) + W, and never refresh it. Both are kept by the same two rules, which
-- are Redisson's: when the head takes the lock or a waiter gives up, everyone
-- behind it is one place nearer the head and its score drops by W; when a
-- gone head is dropped, the others' scores stay as they are. Lowering them
-- then would push a live Redisson waiter queued behind a dead one past its
-- deadline, and it would be dropped too (warden's own waiters correct theirs
-- at their next attempt anyway). A waiter whose process died therefore holds
-- up the queue at most W after its last attempt, plus W for each gone waiter
-- dropped ahead of it. Scores are read against the server's clock (TIME), the
-- one clock every client shares.
local refusal, fields = acquire_refusal(KEYS[1], KEYS[5], 'lock')
if refusal then
  return refusal
end
-- The guard read every field: whether this owner holds the lock already.
local mine = false
for i = 1, fields and #fields or 0, 2 do
  if fields[i] == ARGV[2] then
    mine = true
  end
end
for _, aux in ipairs({{KEYS[3], 'list'}, {KEYS[4], 'zset'}}) do
  local aux_type = redis.call('type', aux[1])['ok']
  if aux_type ~= 'none' and aux_type ~= aux[2] then
    return redis.error_reply('WARDEN_WRONG_TYPE ' .. aux[1] .. ' is a ' .. aux_type .. ', not a fair lock\'s ' .. aux[2])
  end
end
if ARGV[7] == '0' and mine then
  return redis.error_reply('WARDEN_WOULD_DEADLOCK owner ' .. ARGV[2] ..
    ' already holds this non-re-entrant lock; asking again would wait for itself for ever')
end
if redis.replicate_commands ~= nil then
  redis.replicate_commands()  -- Redis < 5: TIME before writes needs effects replication
end
local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local me = ARGV[2]
local wait = tonumber(ARGV[5])

-- Everyone still queued moved up one place.
local function move_up()
  local waiters = redis.call('zrange', KEYS[4], 0, -1)
  for i = 1, #waiters do
    redis.call('zincrby', KEYS[4], -wait, waiters[i])
  end
end

-- Drop gone waiters (deadline passed, or no deadline at all) from the head,
-- leaving the others' deadlines as they are (see above).
local dropped = false
while true do
  local head = redis.call('lindex', KEYS[3], 0)
  if head == false then
    break
  end
  local deadline = tonumber(redis.call('zscore', KEYS[4], head))
  if deadline ~= nil and deadline > now then
    break
  end
  redis.call('lpop', KEYS[3])
  redis.call('zrem', KEYS[4], head)
  dropped = true
end

-- Nothing above wrote the lock's hash: the guard's reading of it stands.
local free = fields == nil
local head = redis.call('lindex', KEYS[3], 0)
if free and (head == false or head == me) then
  if head == me then
    redis.call('lpop', KEYS[3])
    redis.call('zrem', KEYS[4], me)
    move_up()
  end
  redis.call('hset', KEYS[1], me, 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mine then
  redis.call('hincrby', KEYS[1], me, 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end

-- The lock is free but someone else heads the queue. If that head was
-- promoted just now by dropping gone waiters, nobody has told it yet.
if free and dropped then
  redis.call(ARGV[3], KEYS[2] .. ':' .. head, ARGV[4])
end

-- How long to wait: while the lock is held, until its lease runs out (its
-- release wakes the head earlier); while it is free, until the head's
-- deadline, when the head can be dropped if it is gone. Never above W/3.
local hint
local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 then
  hint = ttl
elseif free then
  hint = (tonumber(redis.call('zscore', KEYS[4], head)) or now) - now + 1
else
  hint = wait  -- held without expiry: poll
end
hint = math.max(1, math.min(hint, math.floor(wait / 3)))

if ARGV[6] ~= '1' then
  return hint
end

local position = nil
local queue = redis.call('lrange', KEYS[3], 0, -1)
for i = 1, #queue do
  if queue[i] == me then
    position = i
    break
  end
end
if position == nil then
  redis.call('rpush', KEYS[3], me)
  position = #queue + 1
end
redis.call('zadd', KEYS[4], now + position * wait, me)
return hint
