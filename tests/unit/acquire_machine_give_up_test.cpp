// AcquireMachine: a take-back that gives up unanswered marks the attempt
// "not taken" before the owner's lane is left, so that a copy of it still in
// a dropped connection changes nothing once the owner's next command has run
// (docs/model.md, NegativeTakeBackGiveUp).
#include "acquire_machine_driver.hpp"

namespace {

using namespace acquire_machine_test;

// Drives an acquire whose replies are all lost to its failure: the caller is
// answered, and the last try is being taken back in the lane.
void fail_with_take_back(M& m) {
  first_try(m);
  std::error_code lost = make_error_code(warden::errc::timed_out);
  ASSERT_TRUE(has<M::settle>(m.on(M::answered{t0, M::answer::lost, 0ms, lost})));
  for (int i = 1; i < max_unknown; ++i) {
    ASSERT_TRUE(has<M::settle>(m.on(M::settled{t0 + 1ms, true, M::settle_answer::unanswered, lost, 0ms})));
  }
  auto out = m.on(M::settled{t0 + 2ms, true, M::settle_answer::unanswered, lost, 0ms});
  auto back = find<M::settle>(out);
  ASSERT_TRUE(back);
  ASSERT_FALSE(back->keep);
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  ASSERT_EQ(done->why, M::reason::failed);
  ASSERT_FALSE(has<M::leave_lane>(out));
}

M::settled take_back_gave_up(std::error_code why = make_error_code(warden::errc::timed_out)) {
  return M::settled{t0 + 10s, false, M::settle_answer::unanswered, why, 0ms};
}

TEST(AcquireMachineGiveUp, AnUnansweredTakeBackMarksTheAttemptAndKeepsTheLane) {
  M m = make_machine(10s);
  fail_with_take_back(m);
  auto out = m.on(take_back_gave_up());
  EXPECT_TRUE(has<M::log_take_back_failed>(out));
  EXPECT_TRUE(has<M::mark_given_up>(out));
  EXPECT_FALSE(has<M::leave_lane>(out));
  EXPECT_FALSE(has<M::finish>(out));  // the caller had its answer already
  // The mark is answered: now the owner's next command may go.
  out = m.on(M::marked{true, {}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

TEST(AcquireMachineGiveUp, AnUnansweredMarkIsSentAgainUntilAnswered) {
  M m = make_machine(10s);
  fail_with_take_back(m);
  ASSERT_TRUE(has<M::mark_given_up>(m.on(take_back_gave_up())));
  for (auto why : {warden::errc::timed_out, warden::errc::connection_lost, warden::errc::connection_refused}) {
    auto out = m.on(M::marked{false, make_error_code(why)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<M::mark_given_up>(out[0]));
  }
  // An error reply is no mark either.
  auto out = m.on(M::marked{false, {}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::mark_given_up>(out[0]));
  out = m.on(M::marked{true, {}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

TEST(AcquireMachineGiveUp, ShuttingDownLeavesTheLaneWithoutAMark) {
  auto shut = make_error_code(warden::errc::shut_down);
  M m = make_machine(10s);
  fail_with_take_back(m);
  auto out = m.on(take_back_gave_up(shut));
  EXPECT_TRUE(has<M::leave_lane>(out));
  EXPECT_FALSE(has<M::mark_given_up>(out));
  // Or while the mark is being sent.
  M marking = make_machine(10s);
  fail_with_take_back(marking);
  ASSERT_TRUE(has<M::mark_given_up>(marking.on(take_back_gave_up())));
  out = marking.on(M::marked{false, shut});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

TEST(AcquireMachineGiveUp, AnAnsweredTakeBackLeavesTheLaneAtOnce) {
  for (auto kind : {M::settle_answer::applied, M::settle_answer::not_applied}) {
    M m = make_machine(10s);
    fail_with_take_back(m);
    auto out = m.on(M::settled{t0 + 3ms, false, kind, {}, 0ms});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
  }
}

TEST(AcquireMachineGiveUp, AReplicaSyncFailureIsAnsweredWhileTheMarkIsSent) {
  M m = make_machine(100ms);
  first_try(m);
  ASSERT_TRUE(has<M::arm_sync_guard>(m.on(M::answered{t0 + 100ms, M::answer::acquired_short, 0ms, {}, 20ms})));
  auto out = m.on(M::settled{t0 + 2s, false, M::settle_answer::unanswered, {}, 0ms});
  auto log = find<M::log_take_back_failed>(out);
  ASSERT_TRUE(log);
  EXPECT_TRUE(log->short_of_replicas);
  EXPECT_TRUE(has<M::mark_given_up>(out));
  EXPECT_FALSE(has<M::leave_lane>(out));
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::replica_sync_failed);
  out = m.on(M::marked{true, {}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

TEST(AcquireMachineGiveUp, ARetryAfterAnUnacknowledgedTryWaitsBehindTheMark) {
  // A try too few replicas acknowledged is taken back and the wait goes on:
  // its next try enters the lane, which the mark still holds.
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::pause>(m.on(M::answered{t0 + 1ms, M::answer::acquired_short, 0ms, {}, 20ms})));
  auto out = m.on(M::settled{t0 + 15ms, false, M::settle_answer::unanswered, {}, 0ms});
  EXPECT_TRUE(has<M::mark_given_up>(out));
  EXPECT_FALSE(has<M::leave_lane>(out));
  EXPECT_FALSE(has<M::finish>(out));
  // The pause ends: the re-try waits for the lane (bounded by the caller's).
  auto lane = find<M::enter_lane>(m.on(M::timer_fired{}));
  ASSERT_TRUE(lane);
  EXPECT_EQ(lane->give_up_at, m.bound());
  out = m.on(M::marked{true, {}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

}  // namespace
