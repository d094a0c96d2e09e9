// Every decision of one acquire, as a pure machine (docs/pure-machines.md):
// try, subscribe, the woken re-try, settling a lost reply by reading it back,
// the replica-sync back-off, the re-try of a refused try, cancellation,
// leaving the fair queue and the time-out. AcquireOp (acquire_op.cpp)
// performs the actions and feeds back what happened; it keeps no decision
// of its own.
//
// The path of a waiter: try, and if the lock is held, join the lock's
// waiters and, once the subscription is confirmed, try again (the holder may
// have left before it), then sleep until woken or min(lock TTL, time left),
// and try again. A first try on a channel the subscriber has confirmed
// already joins before it is sent, and a held lock then means sleep at once.
// A polling waiter (SpinLock) never subscribes: it pauses for its back-off's
// next delay, capped by the TTL and the time left. A try whose reply is lost
// is read back (and, if it took the lock, kept); after max_unknown lost
// replies the acquire fails and the last one is taken back. A take-back
// unanswered by its deadline marks the attempt "not taken" before the
// owner's lane is left (mark_given_up). An acquire that
// falls short of Config::replica_sync backs off and re-tries within the
// wait; only tries that ran unacknowledged use up lock()'s retries, a
// refusal unsent (no replica attached) does not.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <system_error>
#include <variant>

#include <warden/observer.hpp>

#include "io/action_list.hpp"
#include "io/timer_queue.hpp"
#include "lock/spin_delays.hpp"

namespace warden::detail {

class AcquireMachine {
 public:
  using milliseconds = std::chrono::milliseconds;

  // What one try's answer was, as read by the driver.
  enum class answer {
    lost,            // no reply (connection dropped, or none in time): outcome unknown
    acquired,        // the lock is held
    held,            // someone else holds it for `ttl` more (negative: no expiry)
    acquired_short,  // it took the lock but too few replicas acknowledged it
    refused_short,   // not sent: the master has too few replicas attached
    not_run,         // refused (loading, busy, ...) until the command's deadline
    failed,          // a transport error (`error`)
    would_deadlock,  // a non-re-entrant lock already held by this owner
    error_reply,     // an error reply (`error`)
    bad_reply,       // not a reply the kind's script gives
  };
  // What a settle's answer was.
  enum class settle_answer {
    applied,        // the lost try had taken effect (kept, or taken back as asked)
    not_applied,    // it had not, and now cannot
    applied_short,  // kept, but too few replicas acknowledged it
    unanswered,     // no usable answer
  };

  // ---- events ----
  struct started {
    bool cancelled = false;  // the caller's token was cancelled already
  };
  struct admitted {  // the owner's lane is this acquire's: the try may go
    clock::time_point now;
  };
  struct lane_timed_out {};  // the lane stayed busy past the caller's bound
  struct joined_early {};    // join_if_subscribed found the channel confirmed and joined
  struct answered {
    answered() = default;
    answered(clock::time_point at, answer what, milliseconds held_for = milliseconds{0}, std::error_code why = {},
             milliseconds back_off = milliseconds{0})
        : now(at), kind(what), ttl(held_for), error(why), delay(back_off) {}
    clock::time_point now;
    answer kind = answer::lost;
    milliseconds ttl{0};     // held
    std::error_code error;   // lost, not_run, failed, error_reply
    milliseconds delay{0};   // acquired_short, refused_short: the back-off's next delay
    bool nil_reply = false;  // the reply was nil (what a finished acquire takes back)
  };
  struct settled {
    settled() = default;
    settled(clock::time_point at, bool keeping, settle_answer what = settle_answer::unanswered,
            std::error_code why = {}, milliseconds back_off = milliseconds{0})
        : now(at), keep(keeping), kind(what), error(why), delay(back_off) {}
    clock::time_point now;
    bool keep = false;  // it was asked to keep the hold
    settle_answer kind = settle_answer::unanswered;
    std::error_code error;  // unanswered: the error to report, if the settle ran
    milliseconds delay{0};  // applied_short: the back-off's next delay
  };
  // The answer to mark_given_up: `answered`, the mark is set (or was there);
  // else none came in time (`error`: shut_down means nothing more can go).
  struct marked {
    bool answered = false;
    std::error_code error;
  };
  struct subscription_ready {};  // the subscriber confirmed the waiter (or will not: re-try)
  struct woken {
    wake_cause why = wake_cause::message;
  };
  struct timer_fired {};
  struct permit_taken {};  // parking found a wake-up that came while nobody was parked
  struct node_moved {      // parking found the lock served by another node
    milliseconds wait{0};
  };
  struct sync_guard_expired {};
  struct cancelled {};
  struct shut_down {};
  using event =
      std::variant<started, admitted, lane_timed_out, joined_early, answered, settled, marked, subscription_ready,
                   woken, timer_fired, permit_taken, node_moved, sync_guard_expired, cancelled, shut_down>;

  // ---- actions ----
  // Why an acquire ends (the driver words the message).
  enum class reason {
    acquired,
    timed_out,  // the wait ran out
    cancelled_before_start,
    cancelled,
    shut_down,
    lane_timed_out,  // an earlier attempt of the owner was still being settled
    failed,          // too many lost replies
    not_run,         // the server did not run the try in time
    transport,       // a transport error
    would_deadlock,
    error_reply,
    bad_reply,
    unknown_at_deadline,  // a read-back unanswered when the wait ran out
    replica_sync_failed,
  };
  enum class queue_exit {
    stay,        // no place to give up (or kept: keep_queue_place)
    wait,        // give it up, and answer once that is done (or by the bound)
    background,  // give it up without waiting (shutting down)
  };
  struct enter_lane {  // then admitted, or lane_timed_out at give_up_at
    std::optional<clock::time_point> give_up_at;
  };
  struct leave_lane {};
  struct join_if_subscribed {};  // join before the try if the channel is confirmed (then joined_early)
  struct send_try {
    clock::time_point sent;  // as admitted: what the try's deadline counts from
    bool last = false;       // no wait follows: the kind's try-only script
  };
  struct settle {  // read back the last try: keep it (true) or take it back
    bool keep = false;
  };
  struct subscribe {  // time out after `wait`, and join where the lock lives now; ready re-tries
    milliseconds wait{0};
  };
  struct park {  // sleep until woken, or `wait`
    milliseconds wait{0};
  };
  struct pause {  // sleep `wait` on a timer, no subscription
    milliseconds wait{0};
  };
  struct disarm {};
  struct unpark {};
  struct count_wake {
    wake_cause why = wake_cause::message;
  };
  struct note_sync_failure {};  // word the replica-sync failure now (tries, time taken)
  struct arm_sync_guard {};     // answer replica_sync_failed by the bound even if the take-back hangs
  struct log_take_back_failed {
    bool short_of_replicas = false;
  };
  // A take-back went unanswered by its deadline: set the attempt's mark as
  // "not taken" unless one is there (SET NX), then marked. The lane stays
  // held until that is answered: a copy of the take-back still in a dropped
  // connection then finds the mark and changes nothing, rather than take the
  // owner's next hold back. Sent again (it is idempotent) until answered.
  struct mark_given_up {};
  struct finish {
    reason why = reason::timed_out;
    std::error_code error;
    bool acquired = false;
    bool pass_wake = false;  // used a wake-up and leaves without the lock: hand it on
    queue_exit queue = queue_exit::stay;
  };
  using action =
      std::variant<enter_lane, leave_lane, join_if_subscribed, send_try, settle, subscribe, park, pause, disarm, unpark,
                   count_wake, note_sync_failure, arm_sync_guard, log_take_back_failed, mark_given_up, finish>;
  using actions = action_list<action, 4>;

  // `wait`: how long the caller may wait (nullopt: for ever). `max_unknown`:
  // how many lost acquire replies to tolerate, and, for a wait without a
  // deadline, how many more acquires too few replicas acknowledged
  // (Config::retry_attempts for both). `unknown_ttl_wait`: the sleep when the
  // holder's TTL is unknown (a key without expiry), so that a lost unlock
  // message costs a bounded delay. `command_time`: how long the last try
  // (sent at the deadline) gets to answer. `keep_queue_place`: a wait ending
  // without the lock stays in the fair queue. `polling`: the delays of a
  // waiter that polls instead of subscribing (nullopt: it subscribes).
  AcquireMachine(clock::time_point start, std::optional<milliseconds> wait, int max_unknown,
                 milliseconds unknown_ttl_wait, milliseconds command_time, bool keep_queue_place = false,
                 std::optional<SpinDelays> polling = std::nullopt);

  actions on(const event& e);

  // Queries for the driver's bookkeeping and for tests; they decide nothing.
  std::optional<clock::time_point> deadline() const { return deadline_; }
  // The caller has its answer by then; time_point::max(): unbounded.
  clock::time_point bound() const { return bound_; }
  bool finished() const { return finished_; }
  bool joined() const { return joined_; }

 private:
  actions on_event(const started& e);
  actions on_event(const admitted& e);
  actions on_event(const lane_timed_out& e);
  actions on_event(const joined_early& e);
  actions on_event(const answered& e);
  actions on_event(const settled& e);
  actions on_event(const marked& e);
  actions on_event(const subscription_ready& e);
  actions on_event(const woken& e);
  actions on_event(const timer_fired& e);
  actions on_event(const permit_taken& e);
  actions on_event(const node_moved& e);
  actions on_event(const sync_guard_expired& e);
  actions on_event(const cancelled& e);
  actions on_event(const shut_down& e);

  void retry(actions& out);
  void end(actions& out, reason why, std::error_code error, bool acquired = false);
  void held(actions& out, clock::time_point now, milliseconds ttl);
  void lost(actions& out);
  void short_of_replicas(actions& out, clock::time_point now, bool ran, milliseconds delay);
  bool past_deadline(clock::time_point now) const { return deadline_ && now >= *deadline_; }
  milliseconds left(clock::time_point now) const { return std::chrono::ceil<milliseconds>(*deadline_ - now); }

  std::optional<clock::time_point> deadline_;
  clock::time_point bound_ = clock::time_point::max();
  std::error_code last_error_;
  milliseconds unknown_ttl_wait_;
  // Only a polling waiter has one: on the heap, so that the many waiters
  // that subscribe do not carry its room.
  std::unique_ptr<SpinDelays> polling_;
  int max_unknown_;
  int unknown_ = 0;
  int unacknowledged_ = 0;  // acquires that ran and too few replicas acknowledged
  bool keep_queue_place_;
  bool joined_ = false;     // joined the waiters (subscribing, or before the first try)
  bool in_flight_ = false;  // a try or a keeping settle is queued or running
  bool poked_ = false;      // woken while in flight: re-try after the answer
  bool finished_ = false;
  bool waited_ = false;         // a try was sent that may have left the owner waiting in line
  bool woken_ = false;          // woken by pub/sub since it last went to sleep
  bool ready_is_news_ = false;  // joined by subscribing, which re-tries once ready
  bool taking_back_ = false;    // a take-back of a try too few replicas acknowledged is under way
  bool sync_failed_ = false;    // fail replica_sync_failed once that take-back is done
};

}  // namespace warden::detail
