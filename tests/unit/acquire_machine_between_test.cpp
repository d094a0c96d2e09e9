// AcquireMachine: what happens between a whole acquire's steps (wake-ups,
// confirmations and timers while a try is in flight, late tries taken back).
#include "acquire_machine_driver.hpp"

namespace {

using namespace acquire_machine_test;

// ---- what happens in between ----

TEST(AcquireMachineBetween, AWakeUpDuringATryMakesAHeldAnswerRetryInsteadOfSleeping) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::subscription_ready{})));
  ASSERT_TRUE(has<M::send_try>(m.on(M::admitted{t0 + 1ms})));
  // Woken while the re-try is in flight: counted, nothing sent yet.
  auto out = m.on(M::woken{wake_cause::reconnect});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<M::count_wake>(out[0]).why, wake_cause::reconnect);
  out = m.on(held_for(t0 + 2ms, 5s));
  EXPECT_TRUE(has<M::enter_lane>(out));
  EXPECT_FALSE(has<M::park>(out));
}

TEST(AcquireMachineBetween, ASubscriptionConfirmedDuringATryRetriesAfterIt) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::timer_fired{})));  // no confirmation in time: re-try anyway
  EXPECT_TRUE(m.on(M::subscription_ready{}).empty());       // confirmed while the re-try is in flight
  EXPECT_TRUE(has<M::enter_lane>(m.on(held_for(t0 + 1s, 5s))));
}

TEST(AcquireMachineBetween, ATimerWhileATryIsInFlightIsIgnored) {
  M m = make_machine(10s);
  first_try(m);
  EXPECT_TRUE(m.on(M::timer_fired{}).empty());
}

TEST(AcquireMachineBetween, TheTimerUnparksCountsAndRetries) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  auto out = m.on(M::timer_fired{});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<M::unpark>(out[0]));
  EXPECT_EQ(std::get<M::count_wake>(out[1]).why, wake_cause::timer);
  EXPECT_TRUE(std::holds_alternative<M::enter_lane>(out[2]));
}

TEST(AcquireMachineBetween, APermitFoundAtParkingRetriesAtOnce) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::subscription_ready{})));
  ASSERT_TRUE(has<M::send_try>(m.on(M::admitted{t0 + 1ms})));
  ASSERT_TRUE(has<M::park>(m.on(held_for(t0 + 2ms, 5s))));
  auto out = m.on(M::permit_taken{});
  EXPECT_EQ(std::get<M::count_wake>(out[0]).why, wake_cause::message);
  EXPECT_TRUE(has<M::enter_lane>(out));
}

TEST(AcquireMachineBetween, ALockThatMovedIsJoinedWhereItLivesNow) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::subscription_ready{})));
  ASSERT_TRUE(has<M::send_try>(m.on(M::admitted{t0 + 1ms})));
  ASSERT_TRUE(has<M::park>(m.on(held_for(t0 + 2ms, 3s))));
  auto again = find<M::subscribe>(m.on(M::node_moved{3s}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->wait, 3s);
  // Its confirmation is news: re-try.
  EXPECT_TRUE(has<M::enter_lane>(m.on(M::subscription_ready{})));
}

TEST(AcquireMachineBetween, JoiningBeforeTheTryMakesItsConfirmationNoNews) {
  M m = make_machine(10s);
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::started{})));
  auto out = m.on(M::admitted{t0});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::join_if_subscribed>(out[0]));
  EXPECT_TRUE(std::holds_alternative<M::send_try>(out[1]));
  EXPECT_TRUE(m.on(M::joined_early{}).empty());
  EXPECT_TRUE(m.on(M::subscription_ready{}).empty());
  EXPECT_TRUE(has<M::park>(m.on(held_for(t0 + 1ms, 5s))));
}

TEST(AcquireMachineBetween, AFinishedAcquireTakesBackWhatALateTryTook) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::finish>(m.on(M::cancelled{})));
  M::answered late{t0 + 1ms, M::answer::acquired};
  late.nil_reply = true;
  auto out = m.on(late);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(std::get<M::settle>(out[0]).keep);
  // A reply that took nothing only leaves the lane.
  M other = make_machine(10s);
  first_try(other);
  ASSERT_TRUE(has<M::finish>(other.on(M::cancelled{})));
  out = other.on(held_for(t0 + 1ms, 5s));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
  // A lost reply is taken back.
  M lost = make_machine(10s);
  first_try(lost);
  ASSERT_TRUE(has<M::finish>(lost.on(M::shut_down{})));
  out = lost.on(M::answered{t0 + 1ms, M::answer::lost});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(std::get<M::settle>(out[0]).keep);
}

TEST(AcquireMachineBetween, AReadBackThatKeptTheHoldAfterTheCallerLeftGivesItBack) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::settle>(m.on(M::answered{t0, M::answer::lost})));
  ASSERT_TRUE(has<M::finish>(m.on(M::cancelled{})));
  auto out = m.on(M::settled{t0 + 1ms, true, M::settle_answer::applied, {}, 0ms});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(std::get<M::settle>(out[0]).keep);  // the lane stays held for it
  out = m.on(M::settled{t0 + 2ms, false, M::settle_answer::unanswered, {}, 0ms});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(std::get<M::log_take_back_failed>(out[0]).short_of_replicas);
  // Unanswered: the attempt is marked before the lane is left.
  EXPECT_TRUE(std::holds_alternative<M::mark_given_up>(out[1]));
  out = m.on(M::marked{true, {}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

}  // namespace
