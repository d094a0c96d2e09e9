// AcquireMachine: whole acquires driven to each way they end (acquired, timed
// out, cancelled, shut down, failed, lost replies taken back).
#include "acquire_machine_driver.hpp"

namespace {

using namespace acquire_machine_test;

TEST(AcquireMachineEnds, AcquiredAtTheFirstTry) {
  M m = make_machine(10s);
  first_try(m);
  auto out = m.on(M::answered{t0 + 1ms, M::answer::acquired});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->acquired);
  EXPECT_EQ(done->why, M::reason::acquired);
  EXPECT_FALSE(done->error);
  EXPECT_EQ(done->queue, M::queue_exit::stay);
  EXPECT_TRUE(m.finished());
}

TEST(AcquireMachineEnds, TheLaneWaitsNoLongerThanTheBound) {
  M m = make_machine(10s);
  auto lane = find<M::enter_lane>(m.on(M::started{}));
  ASSERT_TRUE(lane);
  EXPECT_EQ(lane->give_up_at, t0 + 10s + command_time);
  EXPECT_EQ(m.bound(), t0 + 10s + command_time);
  auto done = find<M::finish>(m.on(M::lane_timed_out{}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::lane_timed_out);
  EXPECT_EQ(done->error, warden::errc::timed_out);
  M forever = make_machine(std::nullopt);
  lane = find<M::enter_lane>(forever.on(M::started{}));
  ASSERT_TRUE(lane);
  EXPECT_FALSE(lane->give_up_at.has_value());
}

TEST(AcquireMachineEnds, CancelledBeforeItStartedSendsNothing) {
  M m = make_machine(10s);
  auto out = m.on(M::started{true});
  ASSERT_EQ(out.size(), 1u);
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::cancelled_before_start);
  EXPECT_EQ(done->error, warden::errc::cancelled);
  EXPECT_EQ(done->queue, M::queue_exit::stay);  // never tried: no place to give up
}

TEST(AcquireMachineEnds, CancelledWhileWaitingLeavesTheQueueAndPassesAWakeUpOn) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::woken{wake_cause::message})));
  ASSERT_TRUE(has<M::send_try>(m.on(M::admitted{t0 + 1s})));
  ASSERT_TRUE(has<M::park>(m.on(held_for(t0 + 1s, 5s))));
  // Parked (woken_ was reset by the park), then woken again and cancelled
  // before the re-try answers.
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::woken{wake_cause::message})));
  auto done = find<M::finish>(m.on(M::cancelled{}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::cancelled);
  EXPECT_EQ(done->error, warden::errc::cancelled);
  EXPECT_TRUE(done->pass_wake);
  EXPECT_EQ(done->queue, M::queue_exit::wait);
  // Ends once: later events change nothing.
  EXPECT_TRUE(m.on(M::cancelled{}).empty());
  EXPECT_TRUE(m.on(M::timer_fired{}).empty());
}

TEST(AcquireMachineEnds, AMultiLockMemberKeepsItsQueuePlace) {
  M m = make_machine(1s, true);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::timer_fired{})));
  ASSERT_TRUE(find<M::send_try>(m.on(M::admitted{t0 + 1s}))->last);
  auto done = find<M::finish>(m.on(held_for(t0 + 1s, 5s)));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::timed_out);
  EXPECT_EQ(done->queue, M::queue_exit::stay);
}

TEST(AcquireMachineEnds, ShutDownGivesTheQueuePlaceUpInTheBackground) {
  M m = make_machine(std::nullopt);
  first_try(m);
  ASSERT_TRUE(has<M::subscribe>(m.on(held_for(t0, 5s))));
  auto done = find<M::finish>(m.on(M::shut_down{}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::shut_down);
  EXPECT_EQ(done->error, warden::errc::shut_down);
  EXPECT_EQ(done->queue, M::queue_exit::background);
  EXPECT_FALSE(done->pass_wake);  // never woken
}

TEST(AcquireMachineEnds, TheLastTryAtTheDeadlineNeverQueues) {
  M m = make_machine(0ms);
  ASSERT_TRUE(has<M::enter_lane>(m.on(M::started{})));
  auto out = m.on(M::admitted{t0});
  auto sent = find<M::send_try>(out);
  ASSERT_TRUE(sent);
  EXPECT_TRUE(sent->last);
  EXPECT_FALSE(has<M::join_if_subscribed>(out));
  auto done = find<M::finish>(m.on(held_for(t0, 5s)));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::timed_out);
  EXPECT_EQ(done->queue, M::queue_exit::stay);  // a last try never waits in line
}

TEST(AcquireMachineEnds, LostRepliesFailAndTheLastIsTakenBack) {
  M m = make_machine(10s);
  first_try(m);
  std::error_code lost = make_error_code(warden::errc::timed_out);
  // Lost replies and unanswered read-backs count together.
  auto settle = find<M::settle>(m.on(M::answered{t0, M::answer::lost, 0ms, lost}));
  ASSERT_TRUE(settle);
  EXPECT_TRUE(settle->keep);
  for (int i = 1; i < max_unknown; ++i) {
    settle = find<M::settle>(m.on(M::settled{t0 + 1ms, true, M::settle_answer::unanswered, lost, 0ms}));
    ASSERT_TRUE(settle) << i;
    EXPECT_TRUE(settle->keep) << i;
  }
  ASSERT_FALSE(m.finished());
  auto out = m.on(M::settled{t0 + 2ms, true, M::settle_answer::unanswered, {}, 0ms});
  auto settle_back = find<M::settle>(out);
  ASSERT_TRUE(settle_back);
  EXPECT_FALSE(settle_back->keep);
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::failed);
  EXPECT_EQ(done->error, lost);  // the last error known, kept over an answer without one
}

TEST(AcquireMachineEnds, AReadBackUnansweredAtTheBoundGivesUpAndTakesItBack) {
  M m = make_machine(1s);
  first_try(m);
  ASSERT_TRUE(has<M::settle>(m.on(M::answered{t0 + 1s, M::answer::lost})));
  auto out = m.on(M::settled{m.bound(), true, M::settle_answer::unanswered, {}, 0ms});
  auto back = find<M::settle>(out);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->keep);
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::unknown_at_deadline);
  EXPECT_EQ(done->error, warden::errc::timed_out);
}

TEST(AcquireMachineEnds, AReadBackThatFindsTheLockTakenIsAcquired) {
  M m = make_machine(1s);
  first_try(m);
  ASSERT_TRUE(has<M::settle>(m.on(M::answered{t0, M::answer::lost})));
  auto out = m.on(M::settled{t0 + 2s, true, M::settle_answer::applied, {}, 0ms});
  EXPECT_TRUE(has<M::leave_lane>(out));
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->acquired);
}

TEST(AcquireMachineEnds, RefusedTriesRetryUntilTheBoundThenFail) {
  M m = make_machine(1s);
  first_try(m);
  auto code = make_error_code(warden::errc::server_error);
  auto out = m.on(M::answered{t0 + 10ms, M::answer::not_run, 0ms, code});
  EXPECT_TRUE(has<M::leave_lane>(out));
  EXPECT_TRUE(has<M::enter_lane>(out));
  ASSERT_TRUE(has<M::send_try>(m.on(M::admitted{t0 + 20ms})));
  auto done = find<M::finish>(m.on(M::answered{m.bound(), M::answer::not_run, 0ms, code}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::not_run);
  EXPECT_EQ(done->error, code);
}

TEST(AcquireMachineEnds, ErrorsEndTheAcquire) {
  struct row {
    M::answer kind;
    std::error_code error;
    M::reason why;
    std::error_code reported;
  };
  auto refused = make_error_code(warden::errc::connection_refused);
  auto wrong_type = make_error_code(warden::errc::wrong_type);
  for (auto r :
       {row{M::answer::failed, refused, M::reason::transport, refused},
        row{M::answer::would_deadlock, {}, M::reason::would_deadlock, make_error_code(warden::errc::would_deadlock)},
        row{M::answer::error_reply, wrong_type, M::reason::error_reply, wrong_type},
        row{M::answer::bad_reply, {}, M::reason::bad_reply, make_error_code(warden::errc::protocol_error)}}) {
    M m = make_machine(10s);
    first_try(m);
    auto out = m.on(M::answered{t0, r.kind, 0ms, r.error});
    EXPECT_TRUE(has<M::leave_lane>(out));
    auto done = find<M::finish>(out);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->why, r.why);
    EXPECT_EQ(done->error, r.reported);
    EXPECT_EQ(done->queue, M::queue_exit::wait);  // it may have joined the queue
  }
}

TEST(AcquireMachineEnds, ReplicaSyncFailureWaitsForTheTakeBack) {
  M m = make_machine(100ms);
  first_try(m);
  auto out = m.on(M::answered{t0 + 100ms, M::answer::acquired_short, 0ms, {}, 20ms});
  auto back = find<M::settle>(out);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->keep);
  EXPECT_TRUE(has<M::note_sync_failure>(out));
  EXPECT_TRUE(has<M::arm_sync_guard>(out));
  EXPECT_FALSE(has<M::finish>(out));
  // The take-back is answered: now the call fails.
  out = m.on(M::settled{t0 + 110ms, false, M::settle_answer::applied, {}, 0ms});
  EXPECT_TRUE(has<M::leave_lane>(out));
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::replica_sync_failed);
  EXPECT_EQ(done->error, warden::errc::replica_sync_failed);
  // The guard firing later changes nothing.
  EXPECT_TRUE(m.on(M::sync_guard_expired{}).empty());
}

TEST(AcquireMachineEnds, ReplicaSyncFailureByTheGuardWhenTheTakeBackHangs) {
  M m = make_machine(100ms);
  first_try(m);
  ASSERT_TRUE(has<M::arm_sync_guard>(m.on(M::answered{t0 + 100ms, M::answer::acquired_short, 0ms, {}, 20ms})));
  auto done = find<M::finish>(m.on(M::sync_guard_expired{}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::replica_sync_failed);
  // The take-back's late answer only leaves the lane.
  auto out = m.on(M::settled{t0 + 2s, false, M::settle_answer::applied, {}, 0ms});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<M::leave_lane>(out[0]));
}

TEST(AcquireMachineEnds, ARefusalForWantOfReplicasAtTheDeadlineFailsAtOnce) {
  M m = make_machine(100ms);
  first_try(m);
  auto out = m.on(M::answered{t0 + 100ms, M::answer::refused_short, 0ms, {}, 20ms});
  EXPECT_TRUE(has<M::leave_lane>(out));
  EXPECT_TRUE(has<M::note_sync_failure>(out));
  auto done = find<M::finish>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::replica_sync_failed);
}

TEST(AcquireMachineEnds, AKeptReadBackShortOfReplicasIsTakenBackAndRetried) {
  M m = make_machine(10s);
  first_try(m);
  ASSERT_TRUE(has<M::settle>(m.on(M::answered{t0, M::answer::lost})));
  auto out = m.on(M::settled{t0 + 1s, true, M::settle_answer::applied_short, {}, 50ms});
  auto back = find<M::settle>(out);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->keep);
  auto pause = find<M::pause>(out);
  ASSERT_TRUE(pause);
  EXPECT_EQ(pause->wait, 50ms);
  EXPECT_FALSE(m.finished());
}

}  // namespace
