// What a message on a lock's channel wakes. The lock scripts publish "0"
// when a hold ends that one waiter may take over (Lock, FairLock,
// FencedLock, a read lock freeing a writer), and "1" when a write lock's
// last hold goes (readers and writers may be waiting, and all the readers
// can share it). So "0" wakes the oldest parked waiter and "1" every parked one; a
// waiter whose try is in flight when the message comes is owed a permit
// instead: it re-tries at once when it parks, since its answer may predate
// the release. Permits never outnumber the waiters. A waiter woken by "0"
// that leaves without the lock passes the wake-up on, or the others would
// sleep out the TTL of a free lock. Pure (docs/pure-machines.md): the
// subscriber performs the actions.
#pragma once

#include "io/wake_rules.hpp"

namespace warden::detail {

class WakePolicy final : public WakeRules {
 public:
  actions on(const event& e) const override;

 private:
  actions on_event(const message& e) const;
  actions on_event(const passed_on& e) const;
  actions on_event(const nobody_parked& e) const;
  actions on_event(const parking& e) const;
  actions on_event(const left& e) const;
};

// The policy every lock waiter joins its channel with (stateless, shared).
const WakeRules& lock_wake_policy();

}  // namespace warden::detail
