-- Give a held lock a new fixed lease.
-- KEYS[1]  lock name
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field
-- Returns 1 if the owner holds the lock (lease set), else 0.
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
