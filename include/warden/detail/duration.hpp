// warden — distributed locks on Redis.
// Internal: turning caller durations and deadlines into whole milliseconds.
#pragma once

#include <chrono>

namespace warden::detail {

// Rounds up to whole milliseconds, saturating instead of overflowing for
// durations like hours::max().
template <class Rep, class Period>
std::chrono::milliseconds to_ms(const std::chrono::duration<Rep, Period>& d) {
  using wide = std::chrono::duration<long double, std::milli>;
  auto value = std::chrono::duration_cast<wide>(d).count();
  if (value >= static_cast<long double>(std::chrono::milliseconds::max().count())) {
    return std::chrono::milliseconds::max();
  }
  if (value <= static_cast<long double>(std::chrono::milliseconds::min().count())) {
    return std::chrono::milliseconds::min();
  }
  return std::chrono::ceil<std::chrono::milliseconds>(d);
}

// Time left until `deadline`, never negative (a deadline in the past: zero).
template <class Clock, class Duration>
std::chrono::milliseconds until(const std::chrono::time_point<Clock, Duration>& deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return left < std::chrono::milliseconds{0} ? std::chrono::milliseconds{0} : left;
}

}  // namespace warden::detail
