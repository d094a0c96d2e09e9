// WakePolicy: whom a message on a lock's channel wakes, and the wake-ups
// owed to waiters whose try is in flight (permits).
#include <gtest/gtest.h>

#include <variant>

#include "lock/wake_policy.hpp"

namespace {

using warden::detail::WakePolicy;
using R = warden::detail::WakeRules;

const WakePolicy policy;

TEST(WakePolicy, AnUnlockMessageWakesTheOldestParkedWaiter) {
  auto out = policy.on(R::message{"0", 3, 0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<R::wake_oldest>(out[0]));  // no permit: the wake-up is used
}

TEST(WakePolicy, AnUnlockMessageWithNobodyParkedOwesAPermit) {
  auto out = policy.on(R::nobody_parked{3, 1});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 2u);
}

TEST(WakePolicy, PermitsNeverOutnumberTheWaiters) {
  EXPECT_TRUE(policy.on(R::nobody_parked{2, 2}).empty());
  EXPECT_TRUE(policy.on(R::nobody_parked{0, 0}).empty());  // nobody waits: nothing owed
  auto out = policy.on(R::left{1, 3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
  EXPECT_TRUE(policy.on(R::left{2, 2}).empty());
}

TEST(WakePolicy, MessageOneWakesEveryParkedWaiterAndOwesTheOthersAPermitEach) {
  auto out = policy.on(R::message{"1", 5, 1});
  ASSERT_EQ(out.size(), 2u);
  // Owed first: a woken waiter may park again while the others are woken.
  EXPECT_TRUE(std::holds_alternative<R::owe_unparked>(out[0]));
  EXPECT_TRUE(std::holds_alternative<R::wake_parked>(out[1]));
}

TEST(WakePolicy, OtherPayloadsWakeOneAsAnUnlockDoes) {
  auto out = policy.on(R::message{"anything", 2, 0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<R::wake_oldest>(out[0]));
}

TEST(WakePolicy, AWakeUpPassedOnGoesToTheNextParkedWaiterOrBecomesAPermit) {
  auto out = policy.on(R::passed_on{2, 0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<R::wake_oldest>(out[0]));
  // Nobody asleep: the permit, as for a message.
  out = policy.on(R::nobody_parked{2, 0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
}

TEST(WakePolicy, AWaiterParkingWithAPermitRetriesAtOnceAndUsesIt) {
  auto out = policy.on(R::parking{2});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
  EXPECT_TRUE(std::holds_alternative<R::retry_now>(out[1]));
  EXPECT_TRUE(policy.on(R::parking{0}).empty());  // nothing owed: it sleeps
}

TEST(WakePolicy, OneSharedPolicyForEveryLockWaiter) {
  EXPECT_EQ(&warden::detail::lock_wake_policy(), &warden::detail::lock_wake_policy());
}

}  // namespace
