// Every decision of one wait on a count-down latch, as a pure machine
// (docs/pure-machines.md). LatchWaitOp (count_down_latch_core.cpp) performs
// the actions and feeds back what happened.
//
// The path of a waiter: join the latch's channel, and only once the
// subscription is confirmed read the count (so that an opening published
// between the read and the sleep cannot be missed: it wakes the waiter, or
// leaves it a permit when its read is in flight). A count of 0 ends the wait;
// otherwise it sleeps until woken and reads again. A reconnect (messages may
// have been lost meanwhile, or the channel's slot moved) re-joins and reads
// again. The wait ends at its deadline, on cancellation or at shutdown.
#pragma once

#include <cstdint>
#include <system_error>
#include <variant>

#include <warden/observer.hpp>

#include "io/action_list.hpp"
#include "io/wake_rules.hpp"

namespace warden::detail {

class LatchWaitMachine {
 public:
  // ---- events ----
  struct started {
    bool cancelled = false;  // the token was cancelled before the wait began
    bool bounded = false;    // the wait has a deadline
  };
  struct no_node {};             // no server serves the channel now (a cluster mid-failover)
  struct subscription_ready {};  // the subscription is confirmed (or will not come: polling)
  struct count_read {
    std::int64_t count = 0;
  };
  struct read_failed {
    std::error_code error;
  };
  struct permit_taken {};  // parking found a wake-up owed to this waiter
  struct woken {
    wake_cause why = wake_cause::message;
  };
  struct retry_timer_fired {};  // the pause after no_node ended
  struct deadline_passed {};
  struct cancelled {};
  struct shut_down {};
  using event = std::variant<started, no_node, subscription_ready, count_read, read_failed, permit_taken, woken,
                             retry_timer_fired, deadline_passed, cancelled, shut_down>;

  // ---- actions ----
  struct arm_deadline {};
  struct join {};  // leave the channel if joined, then join it where it lives now
  struct read_count {};
  struct park {};
  struct pause {};  // a short wait before joining again (no_node)
  enum class reason { opened, timed_out, cancelled, shut_down, failed };
  struct finish {
    reason why = reason::opened;
    std::error_code error;  // set for every reason but opened and timed_out
  };
  using action = std::variant<arm_deadline, join, read_count, park, pause, finish>;
  using actions = action_list<action, 2>;

  actions on(const event& e);

  bool finished() const { return phase_ == phase::done; }

 private:
  enum class phase { idle, joining, reading, parked, pausing, done };

  actions on_event(const started& e);
  actions on_event(const no_node& e);
  actions on_event(const subscription_ready& e);
  actions on_event(const count_read& e);
  actions on_event(const read_failed& e);
  actions on_event(const permit_taken& e);
  actions on_event(const woken& e);
  actions on_event(const retry_timer_fired& e);
  actions on_event(const deadline_passed& e);
  actions on_event(const cancelled& e);
  actions on_event(const shut_down& e);
  actions end(reason why, std::error_code error = {});

  phase phase_ = phase::idle;
  // A reconnect came while a read was in flight: its answer may predate
  // messages lost with the link, so the waiter joins and reads again.
  bool rejoin_after_read_ = false;
};

// What a message on a latch's channel wakes: "0" (the latch opened) and "1"
// (a new count was set, or the latch deleted: it may be open now) both wake
// every parked waiter and owe each waiter whose read is in flight a re-read;
// each reads the count and ends or sleeps again. Pure: the subscriber
// performs it.
class LatchWakeRules final : public WakeRules {
 public:
  actions on(const event& e) const override;
};

// The rules every latch waiter joins its channel with (stateless, shared).
const WakeRules& latch_wake_rules();

}  // namespace warden::detail
