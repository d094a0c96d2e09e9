-- A read-write lock's mode and one owner's hold count, from the lock's fields
-- as HGETALL lists them: one read serves both a release's decision and its
-- later look at the other holds. Returns the mode (false without one) and the
-- count (nil when the owner holds nothing).
local function mode_and_count(fields, owner)
  local mode, count = false, nil
  for i = 1, #fields, 2 do
    if fields[i] == 'mode' then
      mode = fields[i + 1]
    elseif fields[i] == owner then
      count = tonumber(fields[i + 1])
    end
  end
  return mode, count
end
