#include "lock/lock_events.hpp"

#include <warden/error.hpp>

#include "lock/lock_core.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {

void report_acquire(const LockCore& lock, thread_id owner, const AcquireTally& tally, bool acquired,
                    std::error_code error) {
  auto& hook = lock.client().observer().on_acquire;
  if (!hook) return;
  AcquireEvent event;
  event.lock_name = lock.name();
  event.kind = lock.kind();
  event.owner = owner;
  if (acquired) {
    event.outcome = acquire_outcome::acquired;
  } else if (!error) {
    event.outcome = acquire_outcome::timed_out;
  } else {
    event.outcome = error == errc::cancelled ? acquire_outcome::cancelled : acquire_outcome::failed;
    event.error = error;
  }
  event.waited = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - tally.started);
  event.attempts = tally.attempts;
  event.woken_by_message = tally.woken_by_message;
  event.woken_by_timer = tally.woken_by_timer;
  event.woken_by_reconnect = tally.woken_by_reconnect;
  event.last_wake = tally.last_wake;
  event.replica_sync_misses = tally.replica_sync_misses;
  hook(event);
}

void report_release(const LockCore& lock, thread_id owner, clock::time_point sent, std::error_code error, bool freed,
                    bool replicas_missing) {
  auto& hook = lock.client().observer().on_release;
  if (!hook) return;
  ReleaseEvent event;
  event.lock_name = lock.name();
  event.kind = lock.kind();
  event.owner = owner;
  event.error = error;
  event.freed = freed;
  event.replicas_missing = replicas_missing;
  event.latency = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - sent);
  hook(event);
}

void report_hold_lost(const LockCore& lock, thread_id owner, std::error_code cause, std::string_view message) {
  auto& hook = lock.client().observer().on_hold_lost;
  if (!hook) return;
  HoldLostEvent event;
  event.lock_name = lock.name();
  event.kind = lock.kind();
  event.owner = owner;
  event.cause = cause;
  event.message = message;
  hook(event);
}

}  // namespace warden::detail
