// Durations and deadlines from callers: NaN, the extreme time points of any
// clock and overflow have defined results (checked under UBSan too).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include <warden/detail/duration.hpp>

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::detail::to_ms;
using warden::detail::until;

// A user clock whose epoch is far in the future: its now() is negative.
struct negative_clock {
  using rep = long long;
  using period = std::micro;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<negative_clock>;
  static constexpr bool is_steady = false;
  static time_point now() noexcept { return time_point(duration(-4'000'000'000'000'000'000LL)); }
};

TEST(DurationToMs, NanBecomesANegativeValueEveryCallerRefuses) {
  std::chrono::duration<double> nan{std::numeric_limits<double>::quiet_NaN()};
  EXPECT_EQ(to_ms(nan), milliseconds::min());
  std::chrono::duration<float, std::milli> fnan{std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(to_ms(fnan), milliseconds::min());
}

TEST(DurationToMs, SaturatesAndRoundsUp) {
  EXPECT_EQ(to_ms(std::chrono::hours::max()), milliseconds::max());
  EXPECT_EQ(to_ms(std::chrono::hours::min()), milliseconds::min());
  EXPECT_EQ(to_ms(std::chrono::duration<double>(std::numeric_limits<double>::infinity())), milliseconds::max());
  EXPECT_EQ(to_ms(1500us), 2ms);
  EXPECT_EQ(to_ms(-1500us), -1ms);
  EXPECT_EQ(to_ms(std::chrono::duration<double>(0.25)), 250ms);
}

TEST(DurationUntil, ExtremeDeadlinesOfEveryClock) {
  // max(): centuries away, which the acquire treats as waiting for ever.
  const milliseconds century = std::chrono::hours(24 * 365 * 100);
  EXPECT_EQ(until(std::chrono::steady_clock::time_point::min()), 0ms);
  EXPECT_EQ(until(std::chrono::system_clock::time_point::min()), 0ms);
  EXPECT_GT(until(std::chrono::steady_clock::time_point::max()), century);
  EXPECT_GT(until(std::chrono::system_clock::time_point::max()), century);
  using hours_point = std::chrono::time_point<std::chrono::system_clock, std::chrono::hours>;
  EXPECT_EQ(until(hours_point::min()), 0ms);
  EXPECT_EQ(until(hours_point::max()), milliseconds::max());
  EXPECT_EQ(until(negative_clock::time_point::min()), 0ms);
  EXPECT_GT(until(negative_clock::time_point::max()), century);
  using double_point = std::chrono::time_point<std::chrono::system_clock, std::chrono::duration<double>>;
  EXPECT_EQ(until(double_point(std::chrono::duration<double>(std::nan("")))), 0ms);
}

TEST(DurationUntil, OrdinaryDeadlines) {
  EXPECT_EQ(until(std::chrono::steady_clock::now() - 1s), 0ms);
  auto left = until(std::chrono::steady_clock::now() + 10s);
  EXPECT_GT(left, 9s);
  EXPECT_LE(left, 10s);
}

}  // namespace
