// The two halves of a read-write lock. Both work on one hash NAME with field
// "mode" = "read"/"write", readers "<owner>" -> count, the writer
// "<owner>:write" -> count, and one key per read hold,
// "{NAME}:<owner>:rwlock_timeout:<n>", carrying that hold's lease. Waiters of
// both wait on redisson_rwlock:{NAME}. The rules live in lua/rwlock_*.lua.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lock/lock_core.hpp"

namespace warden::detail {

// Shared by the two halves: the keys and the batched renewal.
class ReadWriteLockCore : public LockCore {
 public:
  ReadWriteLockCore(std::shared_ptr<LockHost> client, std::string name);

  std::string wait_channel(thread_id owner) const override;
  const Script& renew_script() const override;
  ScriptCall set_lease_call(thread_id owner, milliseconds lease) const override;
  const char* layout() const override { return "rwlock"; }

 protected:
  // "{NAME}:<owner>:rwlock_timeout": prefix of owner's read hold keys.
  std::string hold_prefix(thread_id owner) const;
  // "{NAME}", or NAME when it has its own hash tag.
  const std::string& tagged() const { return tagged_; }
  const std::string& rw_channel() const { return rw_channel_; }

 private:
  std::string tagged_;
  std::string rw_channel_;
};

class ReadLockCore final : public ReadWriteLockCore {
 public:
  using ReadWriteLockCore::ReadWriteLockCore;

  ScriptCall acquire_call(thread_id owner, milliseconds lease) const override;
  ScriptCall release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                          milliseconds latch_ttl) const override;
  ScriptCall force_release_call() const override;
  ScriptCall resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const override;
  bool locked(const Inspection& state) const override;
  lock_kind kind() const override { return lock_kind::read; }
};

class WriteLockCore final : public ReadWriteLockCore {
 public:
  using ReadWriteLockCore::ReadWriteLockCore;

  ScriptCall acquire_call(thread_id owner, milliseconds lease) const override;
  ScriptCall release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                          milliseconds latch_ttl) const override;
  ScriptCall force_release_call() const override;
  ScriptCall resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const override;
  // "<owner>:write": hold_count() and is_held_by_*() of the write lock.
  void write_owner_field(thread_id owner, std::string& out) const override;
  const void* owner_field_family() const override;
  bool locked(const Inspection& state) const override;
  lock_kind kind() const override { return lock_kind::write; }
};

}  // namespace warden::detail
