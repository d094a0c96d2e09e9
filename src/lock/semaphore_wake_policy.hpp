// What a message on a semaphore's channel wakes. Every script that frees
// permits publishes the new available count (Redisson's message), so a
// message "N" wakes up to N parked waiters, oldest first, and owes a permit
// to as many of the waiters whose try is in flight as the count has left
// (each re-tries at once when it parks: its answer may predate the
// release). A message that is not a count wakes every parked waiter. Every
// other event goes to the lock policy (lock/wake_policy.hpp): a waiter that
// parks with a permit owed re-tries at once, and permits never outnumber the
// waiters. Pure (docs/pure-machines.md): the subscriber performs the actions.
#pragma once

#include "io/wake_rules.hpp"

namespace warden::detail {

class SemaphoreWakePolicy final : public WakeRules {
 public:
  actions on(const event& e) const override;

 private:
  actions on_message(const message& e) const;
};

// The policy every semaphore waiter joins its channel with (stateless, shared).
const WakeRules& semaphore_wake_policy();

}  // namespace warden::detail
