// The questions the subscriber asks about waking its waiters, and the shape
// of the answers. The subscriber (pubsub.cpp) keeps the waiters of each
// channel and delivers what happens to them; what a message means (whom it
// wakes, what wake-ups are owed) is decided by the rules a waiter brings when
// it joins: the lock layer's wake policy (lock/wake_policy.hpp). A pure
// machine's call shape (docs/pure-machines.md), behind an interface so that
// this layer does not depend on the one above it.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "io/action_list.hpp"

namespace warden::detail {

class WakeRules {
 public:
  // ---- events ----
  // A message was published on the channel, which `waiters` wait on;
  // `permits`: wake-ups owed to those not asleep (each makes the next one to
  // park re-try at once).
  struct message {
    std::string_view payload;
    std::uint32_t waiters = 0;
    std::uint32_t permits = 0;
    std::uint32_t parked = 0;  // of the waiters, those asleep now
  };
  // A waiter that was woken by a message leaves without having used it (it
  // did not take the lock): the wake-up is someone else's now.
  struct passed_on {
    std::uint32_t waiters = 0;
    std::uint32_t permits = 0;
  };
  // wake_oldest found nobody asleep (their tries are in flight).
  struct nobody_parked {
    std::uint32_t waiters = 0;
    std::uint32_t permits = 0;
  };
  // A waiter is about to sleep.
  struct parking {
    std::uint32_t permits = 0;
  };
  // A waiter left; `waiters` are those still there.
  struct left {
    std::uint32_t waiters = 0;
    std::uint32_t permits = 0;
  };
  using event = std::variant<message, passed_on, nobody_parked, parking, left>;

  // ---- actions, performed in order ----
  struct set_permits {
    std::uint32_t permits = 0;
  };
  struct owe_unparked {};  // one permit for each waiter not asleep now (replacing those owed)
  struct wake_oldest {};   // the parked waiter that joined first; none: tell nobody_parked
  struct wake_parked {};   // every parked waiter, oldest first
  struct retry_now {};     // parking: do not sleep, re-try at once (a permit was used)
  struct wake_some {       // the `count` parked waiters that joined first (at most those asleep)
    std::uint32_t count = 0;
  };
  using action = std::variant<set_permits, owe_unparked, wake_oldest, wake_parked, retry_now, wake_some>;
  using actions = action_list<action, 2>;

  virtual ~WakeRules() = default;
  virtual actions on(const event& e) const = 0;
};

}  // namespace warden::detail
