-- The first step of an acquire on a lock's hash: its cancel check and its
-- key-type guard, in as few reads as the answer needs. One EXISTS counts the
-- lock and the attempt's cancel mark together: 0, a free lock and no mark, the
-- everyday case, needs nothing more; 2 means the mark is set. On 1 the
-- guard's HGETALL tells the two apart: no fields, so it was the mark. Only a
-- set mark is read again (by cancel_refusal, for its answer).
-- Needs key_guard and cancel_check before it.
-- Returns the refusal (WARDEN_CANCELLED, WARDEN_WRONG_TYPE) or nil, then the
-- lock's fields as HGETALL lists them (nil: the lock is free) and its mode
-- ('' without one).
local function acquire_refusal(key, mark, kind)
  local found = redis.call('exists', key, mark)
  if found == 0 then
    return nil, nil, ''
  end
  if found == 2 then
    return cancel_refusal(mark), nil, ''
  end
  local refusal, key_type, fields, mode = key_refusal(key, kind)
  if refusal then
    return refusal, nil, ''
  end
  if key_type == 'none' then
    return cancel_refusal(mark), nil, ''
  end
  return nil, fields, mode
end
