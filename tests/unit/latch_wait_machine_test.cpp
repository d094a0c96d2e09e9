// LatchWaitMachine: one wait on a count-down latch (join, then read, then
// sleep until woken), and the wake rules of a latch's channel. No server.
#include <gtest/gtest.h>

#include <variant>

#include <warden/error.hpp>

#include "lock/latch_wait_machine.hpp"

namespace {

using M = warden::detail::LatchWaitMachine;
using R = warden::detail::WakeRules;
using warden::wake_cause;

template <class Action>
bool only(const M::actions& out) {
  return out.size() == 1 && std::holds_alternative<Action>(out[0]);
}

M::finish finish_of(const M::actions& out) {
  EXPECT_EQ(out.size(), 1u);
  return std::get<M::finish>(out[0]);
}

// A machine that joined and whose subscription is confirmed: it reads.
M reading(bool bounded = false) {
  M m;
  m.on(M::started{false, bounded});
  EXPECT_TRUE(only<M::read_count>(m.on(M::subscription_ready{})));
  return m;
}

M parked() {
  M m = reading();
  EXPECT_TRUE(only<M::park>(m.on(M::count_read{2})));
  return m;
}

TEST(LatchWaitMachine, JoinsFirstAndReadsOnlyOnceSubscribed) {
  M m;
  EXPECT_TRUE(only<M::join>(m.on(M::started{false, false})));
  EXPECT_TRUE(m.on(M::count_read{0}).empty());  // no read was asked for yet
  EXPECT_TRUE(only<M::read_count>(m.on(M::subscription_ready{})));
}

TEST(LatchWaitMachine, ABoundedWaitArmsItsDeadlineBeforeJoining) {
  M m;
  auto out = m.on(M::started{false, true});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::arm_deadline>(out[0]));
  EXPECT_TRUE(std::holds_alternative<M::join>(out[1]));
}

TEST(LatchWaitMachine, AnOpenLatchEndsTheWait) {
  M m = reading();
  auto done = finish_of(m.on(M::count_read{0}));
  EXPECT_EQ(done.why, M::reason::opened);
  EXPECT_FALSE(done.error);
  EXPECT_TRUE(m.finished());
  EXPECT_TRUE(m.on(M::deadline_passed{}).empty());  // finished: nothing more
}

TEST(LatchWaitMachine, AClosedLatchSleepsAndAWakeUpReadsAgain) {
  M m = parked();
  EXPECT_TRUE(only<M::read_count>(m.on(M::woken{wake_cause::message})));
  EXPECT_TRUE(only<M::park>(m.on(M::count_read{1})));
  EXPECT_TRUE(only<M::read_count>(m.on(M::woken{wake_cause::timer})));  // a polling subscriber's tick
  EXPECT_EQ(finish_of(m.on(M::count_read{0})).why, M::reason::opened);
}

TEST(LatchWaitMachine, APermitFoundWhenParkingReadsAgainAtOnce) {
  M m = parked();
  EXPECT_TRUE(only<M::read_count>(m.on(M::permit_taken{})));
}

TEST(LatchWaitMachine, AReconnectWhileParkedJoinsAgainThenReads) {
  M m = parked();
  EXPECT_TRUE(only<M::join>(m.on(M::woken{wake_cause::reconnect})));
  EXPECT_TRUE(only<M::read_count>(m.on(M::subscription_ready{})));
}

TEST(LatchWaitMachine, AReconnectDuringAReadJoinsAgainInsteadOfSleeping) {
  M m = reading();
  EXPECT_TRUE(m.on(M::woken{wake_cause::reconnect}).empty());
  // The answer may predate messages lost with the link: not trusted to sleep on.
  EXPECT_TRUE(only<M::join>(m.on(M::count_read{3})));
  EXPECT_TRUE(only<M::read_count>(m.on(M::subscription_ready{})));
  EXPECT_TRUE(only<M::park>(m.on(M::count_read{3})));
}

TEST(LatchWaitMachine, NoNodePausesAndJoinsAgain) {
  M m;
  m.on(M::started{false, false});
  EXPECT_TRUE(only<M::pause>(m.on(M::no_node{})));
  EXPECT_TRUE(only<M::join>(m.on(M::retry_timer_fired{})));
}

TEST(LatchWaitMachine, TheDeadlineEndsTheWaitWithoutAnError) {
  M m = parked();
  auto done = finish_of(m.on(M::deadline_passed{}));
  EXPECT_EQ(done.why, M::reason::timed_out);
  EXPECT_FALSE(done.error);
}

TEST(LatchWaitMachine, CancellationEndsTheWaitWithErrcCancelled) {
  M m = parked();
  auto done = finish_of(m.on(M::cancelled{}));
  EXPECT_EQ(done.why, M::reason::cancelled);
  EXPECT_EQ(done.error, make_error_code(warden::errc::cancelled));

  M before;
  auto early = finish_of(before.on(M::started{true, true}));
  EXPECT_EQ(early.error, make_error_code(warden::errc::cancelled));
}

TEST(LatchWaitMachine, ShutdownAndAFailedReadEndTheWaitWithTheirErrors) {
  M m = parked();
  EXPECT_EQ(finish_of(m.on(M::shut_down{})).error, make_error_code(warden::errc::shut_down));

  M r = reading();
  auto failed = finish_of(r.on(M::read_failed{make_error_code(warden::errc::wrong_type)}));
  EXPECT_EQ(failed.why, M::reason::failed);
  EXPECT_EQ(failed.error, make_error_code(warden::errc::wrong_type));
}

const R& rules = warden::detail::latch_wake_rules();

TEST(LatchWaitMachineWakeRules, ZeroWakesEveryParkedWaiterAndOwesTheOthersARead) {
  auto out = rules.on(R::message{"0", 4, 0});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<R::owe_unparked>(out[0]));
  EXPECT_TRUE(std::holds_alternative<R::wake_parked>(out[1]));
}

TEST(LatchWaitMachineWakeRules, ANewCountOrADeleteWakesEveryWaiterToReadTheCountToo) {
  // "1" follows try_set_count and delete: after a delete the latch is open.
  auto out = rules.on(R::message{"1", 4, 0});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<R::owe_unparked>(out[0]));
  EXPECT_TRUE(std::holds_alternative<R::wake_parked>(out[1]));
}

TEST(LatchWaitMachineWakeRules, AnOwedReadIsTakenWhenParking) {
  auto out = rules.on(R::parking{2});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
  EXPECT_TRUE(std::holds_alternative<R::retry_now>(out[1]));
  EXPECT_TRUE(rules.on(R::parking{0}).empty());
}

TEST(LatchWaitMachineWakeRules, PermitsNeverOutnumberTheWaitersAndNothingIsPassedOn) {
  auto out = rules.on(R::left{1, 3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<R::set_permits>(out[0]).permits, 1u);
  EXPECT_TRUE(rules.on(R::left{2, 2}).empty());
  EXPECT_TRUE(rules.on(R::passed_on{2, 0}).empty());
  EXPECT_TRUE(rules.on(R::nobody_parked{2, 0}).empty());
}

}  // namespace
