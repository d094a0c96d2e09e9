--@prelude latch_guard
-- Read a latch's count (RCountDownLatch.getCount), after checking that the
-- key is a latch. Writes nothing.
-- KEYS[1]  latch name (a string holding the count)
-- Returns the count, 0 when the key is absent (the latch is open); an error
-- reply starting with WARDEN_WRONG_TYPE when the key is not a latch.
local refusal, count = latch_refusal(KEYS[1])
if refusal then
  return refusal
end
return count or 0
