// SpinDelays: the sleeps between a SpinLock waiter's attempts, and the
// checks of a SpinBackoff.
#include <gtest/gtest.h>

#include <warden/spin_lock.hpp>

#include <chrono>
#include <set>

#include "lock/spin_delays.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::SpinBackoff;
using warden::detail::spin_backoff_problem;
using warden::detail::SpinDelays;

TEST(SpinDelays, DefaultDoublesFromOneMillisecondUpTo128PlusJitter) {
  SpinBackoff backoff;
  EXPECT_EQ(backoff.initial_delay, 1ms);
  EXPECT_EQ(backoff.max_delay, 128ms);
  EXPECT_EQ(backoff.multiplier, 2);
  SpinDelays delays(backoff, 42);
  for (milliseconds base : {1ms, 2ms, 4ms, 8ms, 16ms, 32ms, 64ms, 128ms, 128ms, 128ms}) {
    auto d = delays.next();
    EXPECT_GE(d, base);
    EXPECT_LE(d, base + backoff.jitter);
  }
}

TEST(SpinDelays, JitterSpreadsWaitersThatStartTogether) {
  SpinBackoff backoff;
  backoff.jitter = 20ms;
  std::set<milliseconds::rep> seen;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SpinDelays delays(backoff, seed);
    seen.insert(delays.next().count());
  }
  EXPECT_GT(seen.size(), 5u) << "20 seeds drew nearly the same first sleep";
  for (auto d : seen) {
    EXPECT_GE(d, 1);
    EXPECT_LE(d, 21);
  }
}

TEST(SpinDelays, ConstantIsTheSameEveryTime) {
  SpinDelays delays(SpinBackoff::constant(25ms), 7);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(delays.next(), 25ms);
}

TEST(SpinDelays, LargeMultiplierIsCappedWithoutOverflow) {
  SpinBackoff backoff{1ms, std::chrono::hours(1), 1000, 0ms};
  SpinDelays delays(backoff, 1);
  EXPECT_EQ(delays.next(), 1ms);
  EXPECT_EQ(delays.next(), 1s);
  EXPECT_EQ(delays.next(), 1000s);
  EXPECT_EQ(delays.next(), std::chrono::hours(1));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(delays.next(), std::chrono::hours(1));
}

TEST(SpinDelaysBackoffCheck, AcceptsTheDocumentedRanges) {
  EXPECT_FALSE(spin_backoff_problem(SpinBackoff{}));
  EXPECT_FALSE(spin_backoff_problem(SpinBackoff::constant(1ms)));
  EXPECT_FALSE(spin_backoff_problem(SpinBackoff{1ms, std::chrono::hours(1), 1000, std::chrono::hours(1)}));
}

TEST(SpinDelaysBackoffCheck, NamesTheFieldOutOfRange) {
  auto problem = [](SpinBackoff b) { return spin_backoff_problem(b).value_or(""); };
  EXPECT_NE(problem({0ms, 128ms, 2, 0ms}).find("initial_delay"), std::string::npos);
  EXPECT_NE(problem({-5ms, 128ms, 2, 0ms}).find("initial_delay"), std::string::npos);
  EXPECT_NE(problem({10ms, 5ms, 2, 0ms}).find("max_delay"), std::string::npos);
  EXPECT_NE(problem({1ms, std::chrono::hours(2), 2, 0ms}).find("max_delay"), std::string::npos);
  EXPECT_NE(problem({1ms, 128ms, 0, 0ms}).find("multiplier"), std::string::npos);
  EXPECT_NE(problem({1ms, 128ms, 1001, 0ms}).find("multiplier"), std::string::npos);
  EXPECT_NE(problem({1ms, 128ms, 2, -1ms}).find("jitter"), std::string::npos);
  EXPECT_NE(problem({1ms, 128ms, 2, std::chrono::hours(2)}).find("jitter"), std::string::npos);
}

}  // namespace
