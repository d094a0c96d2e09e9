// The fair lock: first come, first served across processes. Waiters queue in
// redisson_lock_queue:{NAME} with deadlines in redisson_lock_timeout:{NAME};
// only the head may take the lock, and a release wakes the head alone on its
// own channel. The scripts (lua/fair_*.lua) hold the queue rules; this class
// only names their keys and arguments.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "lock/lock_core.hpp"

namespace warden::detail {

class FairLockCore final : public LockCore {
 public:
  // `reentrant` false: the non-re-entrant fair lock (see LockCore).
  FairLockCore(std::shared_ptr<LockHost> client, std::string name, bool reentrant = true);

  ScriptCall acquire_call(thread_id owner, milliseconds lease) const override;
  ScriptCall try_acquire_call(thread_id owner, milliseconds lease) const override;
  // redisson_lock__channel:{NAME}:<owner>: a waiter is woken only when it is
  // the one to go next.
  std::string wait_channel(thread_id owner) const override;
  // Leaves the queue without pushing back the deadlines of those behind.
  std::optional<ScriptCall> give_up_call(thread_id owner) const override;
  ScriptCall release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                          milliseconds latch_ttl) const override;
  ScriptCall force_release_call() const override;
  ScriptCall resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const override;
  lock_kind kind() const override { return lock_kind::fair; }

 private:
  ScriptCall acquire(thread_id owner, milliseconds lease, bool join_queue) const;
  std::string wait_timeout() const;

  std::string queue_;
  std::string timeouts_;
};

}  // namespace warden::detail
