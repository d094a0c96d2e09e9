-- The cancel check of an acquire attempt. Its cancel mark,
-- warden_acquire_cancel:{NAME}:<attempt-id>, is set when the client settles an
-- attempt whose reply was lost and finds it did not take effect; should the
-- attempt still arrive afterwards (it was in flight on a connection that
-- dropped), it must not take effect then: the client has already decided.
-- Returns the refusal (an error reply starting with WARDEN_CANCELLED) or nil.
local function cancel_refusal(mark)
  if redis.call('exists', mark) == 1 then
    return redis.error_reply('WARDEN_CANCELLED this acquire attempt was settled as not taken')
  end
  return nil
end
