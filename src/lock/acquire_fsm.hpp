// The decisions of one acquire: try, subscribe, re-try, sleep until woken or
// min(lock TTL, time left), re-try; read ownership back after a lost reply.
// A first try on a channel the subscriber already has confirmed joins the
// waiters before it is sent and, if the lock is held, sleeps at once: the
// re-try after subscribing is only needed when the subscription may have come
// after the try ran.
// A polling acquire (SpinLock) never subscribes: it pauses for its back-off's
// next delay, capped by the TTL and the time left, and re-tries.
// An acquire that falls short of Config::replica_sync backs off and re-tries
// within the wait; only tries that ran and were not acknowledged use up
// lock()'s retries, a refusal unsent (no replica attached) does not.
// Pure logic: the driver (lock_core.cpp) performs each step and reports back.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "io/timer_queue.hpp"
#include "lock/spin_delays.hpp"

namespace warden::detail {

class AcquireFsm {
 public:
  enum class step {
    try_acquire,  // run the acquire script
    subscribe,    // join the lock's waiters; if not confirmed within `wait`, re-try anyway
    sleep,        // park until woken by a message or until `wait` has passed, then re-try
    pause,        // polling: sleep `wait` on a timer (no subscription), then re-try
    back_off,     // replicas fell short: re-try after `wait` (a wake-up re-tries sooner)
    read_back,    // an acquire's reply never came: read back whether it took effect
    acquired,     // done, the lock is held
    timed_out,    // done, the wait ran out
    failed,       // done, too many lost replies, or replicas fell short (replica_short)
  };
  struct decision {
    step next;
    std::chrono::milliseconds wait{0};
  };

  // `wait`: how long the caller may wait (nullopt: for ever). `max_unknown`:
  // how many lost acquire replies to tolerate, and, for a wait without a
  // deadline, how many more acquires too few replicas acknowledged
  // (Config::retry_attempts for both). `unknown_ttl_wait`: the sleep
  // used when the holder's TTL is unknown (a key without expiry), so that a
  // lost unlock message costs a bounded delay. `polling`: the delays of a
  // waiter that polls instead of subscribing (nullopt: it subscribes).
  AcquireFsm(clock::time_point start, std::optional<std::chrono::milliseconds> wait, int max_unknown,
             std::chrono::milliseconds unknown_ttl_wait, std::optional<SpinDelays> polling = std::nullopt);

  decision start() const { return {step::try_acquire}; }
  // Asked before a try is sent: should the waiter join the lock's waiters
  // first? `confirmed`: the channel's subscription is confirmed on the
  // subscriber where the waiter would join (the server took the SUBSCRIBE
  // before it answered, so before this try runs: every unlock published
  // after the try reaches the waiter). Yes (and the waiter counts as joined:
  // a held lock then means sleep, not subscribe) for a first try that is not
  // the last one, of a waiter that does not poll.
  bool join_before_try(clock::time_point now, bool confirmed);
  // The acquire ran and the lock is held by someone else for `ttl` more
  // (negative: the key has no expiry).
  decision held(clock::time_point now, std::chrono::milliseconds ttl);
  // The subscription is confirmed: try again, the holder may have left before it.
  decision subscribed() const { return {step::try_acquire}; }
  // Woken by a message, a timer or a reconnect.
  decision woken() const { return {step::try_acquire}; }
  decision acquired() const { return {step::acquired}; }
  // The acquire's reply was lost (connection dropped, or no reply in time).
  decision unknown();
  // The read-back says whether the lost acquire took effect.
  decision read_back(clock::time_point now, bool applied) const;
  // The acquire fell short of Config::replica_sync. `ran`: it ran, took the
  // lock and too few replicas acknowledged it in time (it is being taken
  // back). Else it was refused unsent because the master has too few
  // replicas attached (right after a failover, say): it did not run, and the
  // caller waits on as if the lock were held. `delay`: the back-off's next
  // delay. Re-try after it (back_off), cut to the time left so that the last
  // try is made at the deadline; at or past the deadline, failed. Without a
  // deadline, failed once more than `max_unknown` tries ran unacknowledged; a
  // refusal never ends such a wait.
  decision replica_short(clock::time_point now, bool ran, std::chrono::milliseconds delay);

  bool joined() const { return joined_; }
  std::optional<clock::time_point> deadline() const { return deadline_; }

 private:
  std::optional<clock::time_point> deadline_;
  int max_unknown_;
  int unknown_ = 0;
  int unacknowledged_ = 0;  // acquires that ran and too few replicas acknowledged
  std::chrono::milliseconds unknown_ttl_wait_;
  bool joined_ = false;
  // Only a polling waiter has one: on the heap, so that the many waiters
  // that subscribe do not carry its room.
  std::unique_ptr<SpinDelays> polling_;
};

}  // namespace warden::detail
