-- A settled attempt that took effect and is kept: the key gets the attempt's
-- whole lease (ms) again, as the acquire set it when it ran. The client counts
-- the hold valid from the attempt's send time plus the lease, and the expiry
-- as it stands may be older: the attempt may have re-entered the count of a
-- hold this owner was told it had lost while its key lived on, and left by
-- the time of the settle (model/lock.pml: NegativeStaleKeep). `at_least`:
-- keep a longer TTL the key has (a read-write lock's hash lives as long as its
-- longest hold). A write in any case, so a WAIT after the script
-- (Config::replica_sync) covers the hold, whichever connection the attempt
-- wrote it on.
local function keep_hold(key, lease, at_least)
  local ms = tonumber(lease)
  if at_least then
    ms = math.max(ms, redis.call('pttl', key))
  end
  redis.call('pexpire', key, ms)
end
