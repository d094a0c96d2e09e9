// Backoff: exponential ceiling with jitter from [ceiling/2, ceiling].
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <vector>

#include "io/backoff.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::detail::Backoff;

// Asserts that many draws for `attempt` fall within [ceiling/2, ceiling].
void expect_within(Backoff& backoff, int attempt, milliseconds ceiling) {
  for (int i = 0; i < 500; ++i) {
    milliseconds d = backoff.delay(attempt);
    ASSERT_GE(d, ceiling / 2) << "attempt " << attempt;
    ASSERT_LE(d, ceiling) << "attempt " << attempt;
  }
}

TEST(Backoff, FirstAttemptIsWithinHalfMinAndMin) {
  Backoff backoff(100ms, 10s, 1);
  expect_within(backoff, 0, 100ms);
}

TEST(Backoff, CeilingDoublesPerAttempt) {
  Backoff backoff(100ms, 100s, 2);
  expect_within(backoff, 1, 200ms);
  expect_within(backoff, 2, 400ms);
  expect_within(backoff, 3, 800ms);
  expect_within(backoff, 6, 6400ms);
}

TEST(Backoff, CeilingCapsAtMax) {
  Backoff backoff(50ms, 2s, 3);
  expect_within(backoff, 5, 1600ms);
  expect_within(backoff, 6, 2s);  // 3200 ms capped
  expect_within(backoff, 7, 2s);
  expect_within(backoff, 1000, 2s);
  expect_within(backoff, 1 << 30, 2s);
}

TEST(Backoff, CapAppliesWhenMaxIsNotAPowerOfTwoMultiple) {
  Backoff backoff(100ms, 300ms, 4);
  expect_within(backoff, 1, 200ms);
  expect_within(backoff, 2, 300ms);
  expect_within(backoff, 3, 300ms);
}

TEST(Backoff, JitterSpreadsDelays) {
  Backoff backoff(1000ms, 1000ms, 5);
  std::set<milliseconds::rep> seen;
  for (int i = 0; i < 200; ++i) seen.insert(backoff.delay(0).count());
  EXPECT_GT(seen.size(), 10u);
}

TEST(Backoff, JitterReachesBothHalves) {
  Backoff backoff(1000ms, 1000ms, 6);
  bool low = false;
  bool high = false;
  for (int i = 0; i < 500; ++i) {
    milliseconds d = backoff.delay(0);
    low = low || d < 750ms;
    high = high || d > 750ms;
  }
  EXPECT_TRUE(low);
  EXPECT_TRUE(high);
}

TEST(Backoff, DeterministicForASeed) {
  Backoff a(10ms, 5s, 42);
  Backoff b(10ms, 5s, 42);
  for (int attempt = 0; attempt < 50; ++attempt) EXPECT_EQ(a.delay(attempt % 12), b.delay(attempt % 12));
}

TEST(Backoff, DifferentSeedsGiveDifferentSequences) {
  Backoff a(1000ms, 1000ms, 1);
  Backoff b(1000ms, 1000ms, 2);
  std::vector<milliseconds> from_a;
  std::vector<milliseconds> from_b;
  for (int i = 0; i < 20; ++i) {
    from_a.push_back(a.delay(0));
    from_b.push_back(b.delay(0));
  }
  EXPECT_NE(from_a, from_b);
}

TEST(Backoff, NonPositiveMinIsRaisedToOneMillisecond) {
  Backoff backoff(0ms, 8ms, 7);
  expect_within(backoff, 0, 1ms);
  expect_within(backoff, 3, 8ms);
}

TEST(Backoff, MaxBelowMinIsRaisedToMin) {
  Backoff backoff(100ms, 10ms, 8);
  expect_within(backoff, 0, 100ms);
  expect_within(backoff, 5, 100ms);
}

TEST(Backoff, NegativeAttemptUsesMin) {
  Backoff backoff(100ms, 1s, 9);
  expect_within(backoff, -3, 100ms);
}

}  // namespace
