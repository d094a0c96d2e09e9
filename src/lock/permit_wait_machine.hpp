// Every decision of one wait for permits (a Semaphore's acquire, and a
// PermitExpirableSemaphore's), as a pure machine (docs/pure-machines.md).
// SemaphoreCore's wait op performs the actions and feeds back what happened.
//
// The path of a waiter: try; if too few permits are free, join the channel
// and, once the subscription is confirmed, try again (a release published
// between the first try and the subscription would otherwise be missed);
// then sleep until a release wakes it, until the time its answer named (a
// PES's earliest expiry) or until its bound, and try again. A first try on
// a channel the subscriber has confirmed already joins before it is sent, so
// a refusal then means sleep at once. The try at the bound is the last. A try
// whose reply is lost is settled: read back and kept (or given back when the
// caller has gone); a keeping settle that gets no answer (a bounded wait's
// ends with the wait's commands) fails the wait and is followed by a
// give-back settle in the background. A wake-up that comes while a try is in flight makes the
// waiter try again after the answer instead of sleeping.
#pragma once

#include <chrono>
#include <optional>
#include <system_error>
#include <variant>

#include "io/action_list.hpp"
#include "io/timer_queue.hpp"

namespace warden::detail {

class PermitWaitMachine {
 public:
  // What one try's answer was, as read by the driver.
  enum class answer {
    taken,        // the permits are the caller's
    refused,      // too few free; `retry_at` may say when some expire
    lost,         // no reply: outcome unknown
    taken_short,  // taken, but too few replicas acknowledged it
    failed,       // an error (`error`): transport, error reply, not run
  };
  enum class settle_answer { taken, not_taken, failed };
  enum class cause { message, reconnect, timer };

  // ---- events ----
  struct started {
    clock::time_point now;
    bool cancelled = false;   // the caller's token was cancelled already
    bool subscribed = false;  // the channel is confirmed on the subscriber the waiter would join
  };
  struct answered {
    clock::time_point now;
    answer kind = answer::lost;
    std::error_code error;                        // failed, lost
    std::optional<clock::time_point> retry_at{};  // refused: when a permit frees by itself
  };
  struct settled {
    clock::time_point now;
    settle_answer kind = settle_answer::failed;
    std::error_code error;
  };
  struct ready {  // the subscription is confirmed, or will not come (re-try rather than wait)
    clock::time_point now;
  };
  struct woken {
    clock::time_point now;
    cause why = cause::message;
  };
  struct timer_fired {
    clock::time_point now;
  };
  struct node_moved {};  // before parking: the channel is served elsewhere now
  struct given_back {};  // the permits of a try that came too late are back
  struct cancelled {};
  struct shut_down {};
  using event =
      std::variant<started, answered, settled, ready, woken, timer_fired, node_moved, given_back, cancelled, shut_down>;

  // ---- actions, performed in order ----
  struct join {};  // join the channel (on_ready follows, at once if confirmed)
  struct leave {
    bool pass_wake = false;  // it was woken and leaves without having used the wake-up
  };
  struct send_try {
    clock::time_point sent;
    bool last = false;  // no wait follows a refusal
  };
  struct park {};  // sleep on the channel (the driver feeds woken{} at once if a wake-up was owed)
  struct arm_timer {
    clock::time_point at;
  };
  struct disarm {};
  struct settle {
    bool keep = true;  // false: give back what the lost try took
  };
  struct give_back {};  // release the permits a try took for a caller that has gone
  enum class outcome { acquired, not_acquired, failed };
  struct finish {
    outcome result = outcome::failed;
    std::error_code error;
  };
  using action = std::variant<join, leave, send_try, park, arm_timer, disarm, settle, give_back, finish>;
  using actions = action_list<action, 4>;

  // `bound`: when the wait ends (time_point::max(): never; the start time:
  // one try).
  explicit PermitWaitMachine(clock::time_point bound) : bound_(bound) {}

  actions on(const event& e);

  bool finished() const { return state_ == state::done; }
  clock::time_point bound() const { return bound_; }

 private:
  enum class state {
    idle,
    trying,       // a try in flight
    subscribing,  // joined, waiting for ready
    parked,       // asleep
    settling,     // a lost try being read back
    giving_back,  // a late try's permits going back
    done,
  };

  actions on_event(const started& e);
  actions on_event(const answered& e);
  actions on_event(const settled& e);
  actions on_event(const ready& e);
  actions on_event(const woken& e);
  actions on_event(const timer_fired& e);
  actions on_event(const node_moved& e);
  actions on_event(const given_back& e);
  actions on_event(const cancelled& e);
  actions on_event(const shut_down& e);

  actions try_now(clock::time_point now);
  actions wait(clock::time_point now, std::optional<clock::time_point> retry_at);
  actions end(outcome result, std::error_code error);

  clock::time_point bound_;
  state state_ = state::idle;
  bool joined_ = false;
  bool ready_ = false;
  bool timer_armed_ = false;
  bool last_try_ = false;
  bool woken_meanwhile_ = false;   // a wake-up came while the try was in flight
  bool wake_unused_ = false;       // woken by a message, and no answer since
  bool cancel_pending_ = false;    // cancelled while a try was in flight
  bool settle_keeps_ = true;       // the settle in flight keeps what the lost try took
  std::error_code pending_error_;  // what the finish says once a give-back is done
};

}  // namespace warden::detail
