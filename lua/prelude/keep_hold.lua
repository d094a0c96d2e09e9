-- A settled attempt that took effect and is kept: its expiry is rewritten as
-- it stands, a write that changes nothing, so that a WAIT after the script
-- (Config::replica_sync) covers the hold, whichever connection the attempt
-- wrote it on.
local function keep_hold(key)
  local ttl = redis.call('pttl', key)
  if ttl > 0 then
    redis.call('pexpire', key, ttl)
  end
end
