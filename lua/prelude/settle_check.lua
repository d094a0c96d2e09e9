-- Settling an acquire attempt whose reply was lost, first step: did it take
-- effect? The client sends nothing else for this owner and lock until the
-- settle has answered, so the hold count it expects can only have come from
-- the attempt. Returns that count when it is there; else sets the attempt's
-- cancel mark (kept mark_ms) so that it never will take effect, and returns nil.
local function settled_count(key, field, expected, mark, mark_ms)
  local count = tonumber(redis.call('hget', key, field))
  if count == nil or count ~= tonumber(expected) then
    redis.call('set', mark, 1, 'px', mark_ms)
    return nil
  end
  return count
end
