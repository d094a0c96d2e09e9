// SemaphoreWakePolicy: a message carries the new free count, and wakes that
// many parked waiters (oldest first), owing the rest to waiters in flight.
#include <gtest/gtest.h>

#include <variant>

#include "lock/semaphore_wake_policy.hpp"

namespace {

using warden::detail::SemaphoreWakePolicy;
using R = warden::detail::WakeRules;

const SemaphoreWakePolicy policy;

TEST(SemaphoreWakePolicy, AReleaseOfOnePermitWakesOneParkedWaiter) {
  auto out = policy.on(R::message{"1", 5, 0, 5});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::wake_some>(out[0]).count, 1u);
}

TEST(SemaphoreWakePolicy, AsManyWaitersWakeAsPermitsAreFree) {
  auto out = policy.on(R::message{"3", 5, 0, 5});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::wake_some>(out[0]).count, 3u);
  // More permits than waiters: every parked one, nothing owed beyond them.
  out = policy.on(R::message{"10", 2, 0, 2});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::wake_some>(out[0]).count, 2u);
}

TEST(SemaphoreWakePolicy, WaitersWhoseTryIsInFlightAreOwedWhatTheParkedOnesLeave) {
  // 4 free, 1 parked, 3 in flight: one woken, three owed a re-try.
  auto out = policy.on(R::message{"4", 4, 0, 1});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 3u);
  EXPECT_EQ(std::get<R::wake_some>(out[1]).count, 1u);
  // 1 free, nobody parked: one owed.
  out = policy.on(R::message{"1", 2, 0, 0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
}

TEST(SemaphoreWakePolicy, NoFreePermitWakesNobody) {
  EXPECT_TRUE(policy.on(R::message{"0", 3, 0, 3}).empty());
  EXPECT_TRUE(policy.on(R::message{"-2", 3, 0, 3}).empty());
}

TEST(SemaphoreWakePolicy, AMessageThatIsNotACountWakesEveryone) {
  auto out = policy.on(R::message{"hello", 3, 0, 2});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<R::owe_unparked>(out[0]));
  EXPECT_TRUE(std::holds_alternative<R::wake_parked>(out[1]));
}

TEST(SemaphoreWakePolicy, AParkingWaiterUsesAPermitAndPermitsNeverOutnumberTheWaiters) {
  auto out = policy.on(R::parking{2});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
  EXPECT_TRUE(std::holds_alternative<R::retry_now>(out[1]));
  EXPECT_TRUE(policy.on(R::parking{0}).empty());
  out = policy.on(R::left{1, 3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
  EXPECT_TRUE(policy.on(R::nobody_parked{2, 2}).empty());
  out = policy.on(R::passed_on{2, 0});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<R::wake_oldest>(out[0]));
}

}  // namespace
