--@prelude settle_record settle_check keep_hold take_back
-- Settle an acquire attempt whose reply was lost: find out whether it took
-- effect and, if so, keep it or take it back; if not, make sure it never will.
-- The client sends nothing else for this owner and lock until this has
-- answered, so the count it expects can only have come from the attempt.
-- KEYS[1]  lock name
-- KEYS[2]  unlock channel
-- KEYS[3]  the attempt's cancel mark (see lock_acquire.lua)
-- ARGV[1]  the attempt's lease (ms): what a kept hold gets again, and what a
--          take-back leaves when holds remain
-- ARGV[2]  owner
-- ARGV[3]  publish command: 'publish', or 'spublish' for a cluster's shard channels
-- ARGV[4]  unlock message ("0"), or "" to publish nothing (SpinLock)
-- ARGV[5]  hold count the attempt would have produced
-- ARGV[6]  "1": keep the hold if the attempt took effect; "0": take it back
-- ARGV[7]  how long (ms) the cancel mark is kept
-- Returns 1 if the attempt had taken effect (now kept or taken back), 0 if
-- it had not (and now cannot).
-- A copy of this settle that ran before it settled the attempt: answer as it did.
local earlier = settled_before(KEYS[3])
if earlier ~= nil then
  return earlier
end
local count = settled_count(KEYS[1], ARGV[2], ARGV[5], KEYS[3], ARGV[7])
if count == nil then
  return 0
end
if ARGV[6] == '1' then
  keep_hold(KEYS[1], ARGV[1])
  return 1
end
take_back(KEYS[1], ARGV[2], count, ARGV[1], function()
  if ARGV[4] ~= '' then
    redis.call(ARGV[3], KEYS[2], ARGV[4])
  end
end)
redis.call('set', KEYS[3], taken_back_mark, 'px', ARGV[7])
return 1
