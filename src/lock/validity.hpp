// What valid_until() answers when there is no hold, and the validity left
// before a valid_until(): values a caller can compute with safely.
#pragma once

#include <chrono>

#include "io/timer_queue.hpp"

namespace warden::detail {

// valid_until() without a hold (never taken, released, lost): the steady
// clock's epoch, time_point{}. Callers write `valid_until() - now() > margin`;
// time_point::min() made that overflow (undefined behaviour, in practice some
// 292 years "left" exactly when the lock was gone). The epoch is where the
// steady clock starts counting (the boot, for Linux's CLOCK_MONOTONIC), so it
// lies at or before every now, their difference is minus the uptime, which
// cannot overflow, and every deadline a real hold has lies after it. A fixed
// value rather than "now at the call": every query without a hold gives the
// same answer, and one that is already past when the caller reads it.
inline constexpr clock::time_point no_hold_until{};

// The validity left at `now` before `until`: whole milliseconds rounded down
// (never more than there is), zero once `until` has passed or without a hold.
inline std::chrono::milliseconds validity_left(clock::time_point until, clock::time_point now) {
  if (until <= now) return std::chrono::milliseconds{0};
  return std::chrono::floor<std::chrono::milliseconds>(until - now);
}

}  // namespace warden::detail
