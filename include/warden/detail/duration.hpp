// warden — distributed locks on Redis.
// Internal: turning caller durations and deadlines into whole milliseconds.
#pragma once

#include <chrono>
#include <cmath>
#include <type_traits>

namespace warden::detail {

// Rounds up to whole milliseconds, saturating instead of overflowing for
// durations like hours::max(). A NaN (floating-point durations) has no
// meaning as a wait or a lease: it becomes milliseconds::min(), which every
// caller refuses as negative (errc::invalid_argument).
template <class Rep, class Period>
std::chrono::milliseconds to_ms(const std::chrono::duration<Rep, Period>& d) {
  using wide = std::chrono::duration<long double, std::milli>;
  if constexpr (std::is_floating_point_v<Rep>) {
    if (std::isnan(d.count())) return std::chrono::milliseconds::min();
  }
  auto value = std::chrono::duration_cast<wide>(d).count();
  if (value >= static_cast<long double>(std::chrono::milliseconds::max().count())) {
    return std::chrono::milliseconds::max();
  }
  if (value <= static_cast<long double>(std::chrono::milliseconds::min().count())) {
    return std::chrono::milliseconds::min();
  }
  return std::chrono::milliseconds{static_cast<std::chrono::milliseconds::rep>(std::ceil(value))};
}

// Time left until `deadline`, never negative (a deadline in the past, or
// time_point::min(): zero, one attempt) and saturating at milliseconds::max()
// (time_point::max(): wait for ever). Computed in long double, since
// `deadline - Clock::now()` overflows for the extreme time points of any clock.
template <class Clock, class Duration>
std::chrono::milliseconds until(const std::chrono::time_point<Clock, Duration>& deadline) {
  using wide = std::chrono::duration<long double, std::milli>;
  // Not `deadline <= Clock::now()` either: converting both to their common
  // duration overflows too (hours::max() in nanoseconds).
  auto left = std::chrono::duration_cast<wide>(deadline.time_since_epoch()).count() -
              std::chrono::duration_cast<wide>(Clock::now().time_since_epoch()).count();
  if (std::isnan(left) || left <= 0) return std::chrono::milliseconds{0};
  if (left >= static_cast<long double>(std::chrono::milliseconds::max().count())) {
    return std::chrono::milliseconds::max();
  }
  return std::chrono::milliseconds{static_cast<std::chrono::milliseconds::rep>(std::ceil(left))};
}

}  // namespace warden::detail
