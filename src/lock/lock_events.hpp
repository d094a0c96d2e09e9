// What the lock code tells the Client's observer (Config::observer): the
// events of acquires, releases and lost holds, built only when the hook is
// set, so that an unobserved event costs one test.
#pragma once

#include <chrono>
#include <string_view>
#include <system_error>

#include <warden/observer.hpp>
#include <warden/thread_id.hpp>

#include "io/timer_queue.hpp"

namespace warden::detail {

class LockCore;

// What one acquire did on its way: kept by the acquire, reported when it ends.
struct AcquireTally {
  clock::time_point started;
  int attempts = 0;
  int woken_by_message = 0;
  int woken_by_timer = 0;
  int woken_by_reconnect = 0;
  wake_cause last_wake = wake_cause::none;
  int replica_sync_misses = 0;

  void woken(wake_cause why) {
    last_wake = why;
    switch (why) {
      case wake_cause::message:
        ++woken_by_message;
        break;
      case wake_cause::timer:
        ++woken_by_timer;
        break;
      case wake_cause::reconnect:
        ++woken_by_reconnect;
        break;
      case wake_cause::none:
        break;
    }
  }
};

// An acquire ended: held (`acquired`), or not, with `error` (empty: the wait ran out).
void report_acquire(const LockCore& lock, thread_id owner, const AcquireTally& tally, bool acquired,
                    std::error_code error);

// A release sent at `sent` was answered: `error` empty when released, `freed`
// when it was the owner's last hold, `replicas_missing` when too few replicas
// acknowledged it.
void report_release(const LockCore& lock, thread_id owner, clock::time_point sent, std::error_code error, bool freed,
                    bool replicas_missing = false);

// A hold was lost (see LockLost).
void report_hold_lost(const LockCore& lock, thread_id owner, std::error_code cause, std::string_view message);

}  // namespace warden::detail
