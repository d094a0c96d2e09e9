// The watchdog's cap on renewal calls in flight per server: a few while
// renewals keep up, wider in steps as they fall behind, bounded in holds
// as well as in calls.
#include <gtest/gtest.h>

#include <chrono>

#include "lock/renewal_pacing.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::nanoseconds period = 10s;

// While renewals keep up, one default batch is in flight: another caller's
// command waits behind at most that much renewal work at the server.
TEST(RenewalPacing, OneBatchWhileRenewalsKeepUp) {
  EXPECT_EQ(RenewalPacing::calls_in_flight(-1s, period, 100), 1u);  // not due yet
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 100), 1u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 4, period, 100), 1u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(std::chrono::nanoseconds::min(), period, 100), 1u);
}

TEST(RenewalPacing, WiderInStepsAsRenewalsFallBehind) {
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 4 + 1ns, period, 100), 16u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 2, period, 100), 16u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 2 + 1ns, period, 100), 64u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(3 * period, period, 100), 64u);
  EXPECT_EQ(RenewalPacing::most_calls_in_flight(100), 64u);
}

// Larger batches: as many holds in flight, so others wait behind as much
// server work, in fewer calls; never fewer than one.
TEST(RenewalPacing, BoundedInHoldsForLargeBatches) {
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 50), 2u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 200), 1u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 400), 1u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 3, period, 200), 16u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 3, period, 800), 4u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 5000), 1u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 3, period, 400), 8u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period, period, 400), 32u);
  EXPECT_EQ(RenewalPacing::most_calls_in_flight(400), 32u);
  EXPECT_EQ(RenewalPacing::most_calls_in_flight(20'000), 1u);
}

// Small batches: bounded in calls (each call costs the server more than its
// holds do).
TEST(RenewalPacing, BoundedInCallsForSmallBatches) {
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 1), 2u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period / 3, period, 1), 16u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(period, period, 1), 64u);
  EXPECT_EQ(RenewalPacing::calls_in_flight(0s, period, 0), 2u);
}

}  // namespace
}  // namespace warden::detail
