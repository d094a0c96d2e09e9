-- Settling an acquire attempt, before anything else: whether a copy of this
-- settle has settled it already. A settle re-sent after a time-out may run
-- first, and its first copy, left in a dropped connection, later: by then the
-- owner's next hold may have brought the count back to what the settle
-- expects, and that copy must not take the new hold back
-- (model/lock.pml: NegativeLateTakeBack). The attempt's mark says how it was
-- settled: the cancel mark (not taken; settle_check), or taken_back_mark,
-- which a take-back sets after its writes (a refused PUBLISH stops it before
-- them). A kept attempt leaves no mark: a copy of a keep only gives the
-- owner's hold its lease again.
-- Returns the answer the earlier copy gave (0: not taken; 1: taken back), or
-- nil when the attempt is still to be settled.
local taken_back_mark = 'taken back'
local function settled_before(mark)
  local seen = redis.call('get', mark)
  if seen == false then
    return nil
  end
  if seen == taken_back_mark then
    return 1
  end
  return 0
end
