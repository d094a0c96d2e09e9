-- A release that finds no hold of its owner's to release says so in its
-- unlock latch too, as it does for its other answers: a copy of it left in a
-- dropped connection, run after its re-send answered and after the owner took
-- the lock again, must not release that next hold
-- (model/lock.pml: NegativeLateRelease). The latch's text is no number, so
-- the copy's `tonumber(seen)` answers nil again (Redisson reads only the
-- latches of its own releases). `believed` is "0" for a release whose
-- client did not believe it held the lock (an unlock by a non-owner): that
-- refusal leaves Redis as it was. Returns nil, the "not held" answer.
local function not_held(latch, latch_ms, believed)
  if believed ~= '0' then
    redis.call('set', latch, 'not held', 'px', latch_ms)
  end
  return nil
end
