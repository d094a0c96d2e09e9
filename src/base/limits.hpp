// Bounds on durations callers may pass.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace warden::detail {

// The longest lease accepted: ten years. Beyond some point Redis refuses the
// PEXPIRE (after the script already wrote the hold, which would then never
// expire) and steady_clock time points overflow; nobody needs a lease that
// long, and a lock meant to live for ever is a watchdog-mode hold.
constexpr std::chrono::milliseconds max_lease = std::chrono::hours(24 * 365 * 10);

// Why `lease` is not acceptable, or nullopt when it is (nullopt: watchdog mode).
inline std::optional<std::string> lease_problem(std::optional<std::chrono::milliseconds> lease) {
  if (!lease) return std::nullopt;
  if (lease->count() <= 0) return fmt::format("the lease must be positive, got {} ms", lease->count());
  if (*lease > max_lease) {
    return fmt::format("the lease must not exceed {} ms (ten years), got {} ms", max_lease.count(), lease->count());
  }
  return std::nullopt;
}

}  // namespace warden::detail
