// AcquireMachine: the waiting rules of one lock acquire (try, subscribe,
// sleep, poll, read back, replica shortfalls), checked through a small
// adapter that feeds one event and names the step its actions take. Whole
// acquires are driven to each way they end in acquire_machine_ends_test.cpp
// and acquire_machine_between_test.cpp.
#include <gtest/gtest.h>

#include <warden/spin_lock.hpp>

#include <chrono>
#include <optional>
#include <variant>

#include <warden/error.hpp>

#include "acquire_machine_driver.hpp"
#include "lock/acquire_machine.hpp"

namespace {

using namespace acquire_machine_test;

// The step an event's actions take, the way the waiting rules speak of it.
enum class step {
  none,         // nothing to do (or only bookkeeping)
  try_acquire,  // enter the lane, then send a try
  subscribe,    // join the waiters, re-try once confirmed or after `wait`
  sleep,        // park until woken or `wait`
  pause,        // a timer of `wait`, no subscription
  back_off,     // a replica shortfall's pause
  read_back,    // settle the lost try, keeping it if it took effect
  take_back,    // settle the lost try, giving it back
  acquired,
  timed_out,
  failed,
};
struct decision {
  step next = step::none;
  milliseconds wait{0};
};

decision summary(const M::actions& out) {
  decision d;
  for (const auto& action : out) {
    if (std::holds_alternative<M::enter_lane>(action)) d = {step::try_acquire};
    if (auto* a = std::get_if<M::subscribe>(&action)) d = {step::subscribe, a->wait};
    if (auto* a = std::get_if<M::park>(&action)) d = {step::sleep, a->wait};
    if (auto* a = std::get_if<M::pause>(&action)) d = {step::pause, a->wait};
    if (auto* a = std::get_if<M::settle>(&action)) d = {a->keep ? step::read_back : step::take_back};
    // Failing once the take-back is done: the decision is made.
    if (std::holds_alternative<M::arm_sync_guard>(action)) d = {step::failed};
    if (auto* a = std::get_if<M::finish>(&action)) {
      d = {a->acquired ? step::acquired : a->why == M::reason::timed_out ? step::timed_out : step::failed};
    }
  }
  return d;
}

// One machine, fed one event per call.
class Fsm {
 public:
  Fsm(std::optional<milliseconds> wait, int unknowns, std::optional<warden::detail::SpinDelays> polling = std::nullopt)
      : machine_(t0, wait, unknowns, unknown_ttl_wait, command_time, false, std::move(polling)) {}

  decision start() { return summary(machine_.on(M::started{})); }
  decision acquired() { return answer(t0, M::answer::acquired); }
  decision held(clock::time_point now, milliseconds ttl) { return answer(now, M::answer::held, ttl); }
  decision subscribed() { return summary(machine_.on(M::subscription_ready{})); }
  decision woken() { return summary(machine_.on(M::woken{wake_cause::message})); }
  decision unknown() { return answer(t0, M::answer::lost); }
  decision read_back(clock::time_point now, bool applied) {
    return summary(machine_.on(
        M::settled{now, true, applied ? M::settle_answer::applied : M::settle_answer::not_applied, {}, 0ms}));
  }
  decision replica_short(clock::time_point now, bool ran, milliseconds delay) {
    M::answered a{now, ran ? M::answer::acquired_short : M::answer::refused_short};
    a.delay = delay;
    auto d = summary(machine_.on(a));
    if (d.next == step::pause) d.next = step::back_off;
    return d;
  }
  // Admits a try at `now`: true if it joined the waiters before it (asked
  // to, and the channel's subscription is `confirmed`).
  bool join_before_try(clock::time_point now, bool confirmed) {
    auto out = machine_.on(M::admitted{now});
    bool asked = false;
    for (const auto& action : out) asked |= std::holds_alternative<M::join_if_subscribed>(action);
    if (!asked || !confirmed) return false;
    EXPECT_TRUE(machine_.on(M::joined_early{}).empty());
    return true;
  }
  bool joined() const { return machine_.joined(); }
  bool finished() const { return machine_.finished(); }
  std::optional<clock::time_point> deadline() const { return machine_.deadline(); }

 private:
  decision answer(clock::time_point now, M::answer kind, milliseconds ttl = 0ms) {
    M::answered a{now, kind};
    a.ttl = ttl;
    return summary(machine_.on(a));
  }
  AcquireMachine machine_;
};

Fsm make_fsm(std::optional<milliseconds> wait, int unknowns = max_unknown) { return Fsm(wait, unknowns); }

TEST(AcquireMachine, StartTriesToAcquire) {
  Fsm fsm = make_fsm(10s);
  EXPECT_EQ(fsm.start().next, step::try_acquire);
  EXPECT_FALSE(fsm.joined());
}

TEST(AcquireMachine, DeadlineIsStartPlusWait) {
  EXPECT_EQ(make_fsm(10s).deadline(), t0 + 10s);
  EXPECT_EQ(make_fsm(0ms).deadline(), t0);
  EXPECT_FALSE(make_fsm(std::nullopt).deadline().has_value());
}

TEST(AcquireMachine, AcquiredIsDone) {
  Fsm fsm = make_fsm(10s);
  EXPECT_EQ(fsm.acquired().next, step::acquired);
}

TEST(AcquireMachine, FirstHeldSubscribesWithTtlWhenTtlIsShorter) {
  Fsm fsm = make_fsm(10s);
  decision d = fsm.held(t0 + 1s, 2s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 2s);
  EXPECT_TRUE(fsm.joined());
}

TEST(AcquireMachine, FirstHeldSubscribesWithTimeLeftWhenThatIsShorter) {
  Fsm fsm = make_fsm(10s);
  decision d = fsm.held(t0 + 7s, 30s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 3s);
}

TEST(AcquireMachine, TimeLeftIsRoundedUpToWholeMilliseconds) {
  Fsm fsm = make_fsm(10s);
  decision d = fsm.held(t0 + 9s + 998500us, 30s);  // 1.5 ms left
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 2ms);
}

TEST(AcquireMachine, SubscribedAndWokenRetry) {
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  EXPECT_EQ(fsm.subscribed().next, step::try_acquire);
  ASSERT_EQ(fsm.held(t0 + 1ms, 1s).next, step::sleep);
  EXPECT_EQ(fsm.woken().next, step::try_acquire);
}

TEST(AcquireMachine, HeldAgainSleepsWithMinOfTtlAndTimeLeft) {
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.held(t0, 1s).next, step::subscribe);

  decision d = fsm.held(t0 + 1s, 4s);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, 4s);

  d = fsm.held(t0 + 8s, 4s);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, 2s);
  EXPECT_TRUE(fsm.joined());
}

TEST(AcquireMachine, SubscribesOnlyOnce) {
  Fsm fsm = make_fsm(std::nullopt);
  EXPECT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(fsm.held(t0 + i * 1s, 1s).next, step::sleep) << i;
}

TEST(AcquireMachine, ZeroTtlIsAKeyInItsLastMillisecond) {
  // PTTL 0: the key expires within the millisecond. Waiting as if it had no
  // expiry would sleep out unknown_ttl_wait on a lock about to be free.
  Fsm fsm = make_fsm(std::nullopt);
  decision d = fsm.held(t0, 0ms);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 1ms);
}

TEST(AcquireMachine, NegativeTtlUsesUnknownTtlWait) {
  Fsm fsm = make_fsm(std::nullopt);
  ASSERT_EQ(fsm.held(t0, -1ms).wait, unknown_ttl_wait);  // PTTL -1: no expiry
  decision d = fsm.held(t0 + 1s, -2ms);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, unknown_ttl_wait);
}

TEST(AcquireMachine, UnknownTtlWaitIsStillCappedByTimeLeft) {
  Fsm fsm = make_fsm(10s);
  decision d = fsm.held(t0 + 8s, -1ms);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 2s);
}

TEST(AcquireMachine, HeldAtTheDeadlineTimesOut) {
  Fsm fsm = make_fsm(10s);
  EXPECT_EQ(fsm.held(t0 + 10s, 1s).next, step::timed_out);
}

TEST(AcquireMachine, HeldPastTheDeadlineTimesOut) {
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.held(t0 + 1s, 1s).next, step::subscribe);
  EXPECT_EQ(fsm.held(t0 + 10s + 1ms, 1s).next, step::timed_out);
  Fsm later = make_fsm(10s);
  EXPECT_EQ(later.held(t0 + 1h, 0ms).next, step::timed_out);
}

TEST(AcquireMachine, HeldJustBeforeTheDeadlineWaitsTheRest) {
  Fsm fsm = make_fsm(10s);
  decision d = fsm.held(t0 + 10s - 1ms, 1s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 1ms);
}

TEST(AcquireMachine, ZeroWaitTriesOnceThenTimesOut) {
  Fsm fsm = make_fsm(0ms);
  EXPECT_EQ(fsm.start().next, step::try_acquire);
  EXPECT_EQ(fsm.held(t0, 10s).next, step::timed_out);
  EXPECT_FALSE(fsm.joined());  // never subscribed
}

TEST(AcquireMachine, NoDeadlineNeverTimesOut) {
  Fsm fsm = make_fsm(std::nullopt);
  decision d = fsm.held(t0, 30s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 30s);
  d = fsm.held(t0 + 24h * 365, 30s);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, 30s);  // the TTL alone, not capped
  EXPECT_EQ(fsm.read_back(t0 + 24h * 3650, false).next, step::try_acquire);
}

TEST(AcquireMachine, UnknownReadsBackUpToMaxUnknownTimesThenFails) {
  Fsm fsm = make_fsm(10s);
  for (int i = 0; i < max_unknown; ++i) EXPECT_EQ(fsm.unknown().next, step::read_back) << i;
  EXPECT_EQ(fsm.unknown().next, step::failed);
  // Done: a lost reply after that is only taken back.
  EXPECT_TRUE(fsm.finished());
  EXPECT_EQ(fsm.unknown().next, step::take_back);
}

TEST(AcquireMachine, ZeroMaxUnknownFailsAtOnce) {
  Fsm fsm = make_fsm(10s, 0);
  EXPECT_EQ(fsm.unknown().next, step::failed);
}

TEST(AcquireMachine, UnknownsCountAcrossRetries) {
  Fsm fsm = make_fsm(std::nullopt, 2);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  ASSERT_EQ(fsm.read_back(t0 + 1s, false).next, step::try_acquire);
  ASSERT_EQ(fsm.held(t0 + 2s, 1s).next, step::subscribe);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  ASSERT_EQ(fsm.read_back(t0 + 3s, false).next, step::try_acquire);
  EXPECT_EQ(fsm.unknown().next, step::failed);
}

TEST(AcquireMachine, ReadBackAppliedIsAcquired) {
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1s, true).next, step::acquired);
}

TEST(AcquireMachine, ReadBackAppliedIsAcquiredEvenPastTheDeadline) {
  // The lock is held: reporting a time-out would leak it.
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1h, true).next, step::acquired);
}

TEST(AcquireMachine, ReadBackNotAppliedRetries) {
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 9s, false).next, step::try_acquire);
}

TEST(AcquireMachine, ReadBackNotAppliedPastTheDeadlineTimesOut) {
  Fsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 10s, false).next, step::timed_out);
  Fsm later = make_fsm(10s);
  ASSERT_EQ(later.unknown().next, step::read_back);
  EXPECT_EQ(later.read_back(t0 + 11s, false).next, step::timed_out);
}

// start + milliseconds::max() would overflow clock::duration (nanoseconds): a
// "wait for ever" passed as a huge duration must not time out after the first try.
TEST(AcquireMachine, HugeWaitDoesNotOverflowIntoAnEarlyTimeOut) {
  Fsm fsm = make_fsm(milliseconds::max());
  decision d = fsm.held(t0 + 1s, 30s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 30s);
  EXPECT_EQ(fsm.read_back(t0 + 24h, false).next, step::try_acquire);
}

// ---- joining before the first try (the channel is already subscribed) ----

TEST(AcquireMachineJoinBeforeTry, AConfirmedChannelJoinsAndAHeldLockSleepsAtOnce) {
  Fsm fsm = make_fsm(10s);
  EXPECT_TRUE(fsm.join_before_try(t0, true));
  EXPECT_TRUE(fsm.joined());
  decision d = fsm.held(t0 + 1s, 2s);
  EXPECT_EQ(d.next, step::sleep);  // no subscribe, so no re-try after it
  EXPECT_EQ(d.wait, 2s);
  EXPECT_EQ(fsm.woken().next, step::try_acquire);
  EXPECT_EQ(fsm.held(t0 + 2s, 2s).next, step::sleep);
}

TEST(AcquireMachineJoinBeforeTry, AnUnconfirmedChannelTakesTheSubscribeAndReTryPath) {
  Fsm fsm = make_fsm(10s);
  EXPECT_FALSE(fsm.join_before_try(t0, false));
  EXPECT_FALSE(fsm.joined());
  EXPECT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  EXPECT_EQ(fsm.subscribed().next, step::try_acquire);
}

TEST(AcquireMachineJoinBeforeTry, OnlyTheFirstTryJoins) {
  Fsm fsm = make_fsm(std::nullopt);
  ASSERT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  EXPECT_FALSE(fsm.join_before_try(t0 + 1s, true));  // joined by subscribing already
  Fsm early = make_fsm(std::nullopt);
  ASSERT_TRUE(early.join_before_try(t0, true));
  EXPECT_FALSE(early.join_before_try(t0 + 1s, true));  // joined once is enough
}

TEST(AcquireMachineJoinBeforeTry, TheLastTryNeverJoins) {
  Fsm zero = make_fsm(0ms);  // try_lock(): one try, no waiting
  EXPECT_FALSE(zero.join_before_try(t0, true));
  EXPECT_EQ(zero.held(t0, 10s).next, step::timed_out);
  EXPECT_FALSE(zero.joined());
  Fsm bounded = make_fsm(10s);
  EXPECT_FALSE(bounded.join_before_try(t0 + 10s, true));
  EXPECT_TRUE(bounded.join_before_try(t0 + 10s - 1ms, true));
}

TEST(AcquireMachineJoinBeforeTry, AReadBackKeepsTheEarlyJoin) {
  Fsm fsm = make_fsm(10s);
  ASSERT_TRUE(fsm.join_before_try(t0, true));
  EXPECT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1s, false).next, step::try_acquire);
  EXPECT_FALSE(fsm.join_before_try(t0 + 1s, true));
  EXPECT_EQ(fsm.held(t0 + 1s, 1s).next, step::sleep);
}

// ---- polling (SpinLock): pauses on the back-off, never subscribes ----

Fsm make_poller(std::optional<milliseconds> wait, warden::SpinBackoff backoff) {
  return Fsm(wait, max_unknown, warden::detail::SpinDelays(backoff, 1));
}

TEST(AcquireMachinePolling, PausesOnTheBackoffAndNeverSubscribes) {
  Fsm fsm = make_poller(std::nullopt, warden::SpinBackoff{1ms, 8ms, 2, 0ms});
  for (milliseconds expected : {1ms, 2ms, 4ms, 8ms, 8ms, 8ms}) {
    decision d = fsm.held(t0 + 1s, 30s);
    EXPECT_EQ(d.next, step::pause);
    EXPECT_EQ(d.wait, expected);
    EXPECT_EQ(fsm.woken().next, step::try_acquire);
  }
  EXPECT_FALSE(fsm.joined());
}

TEST(AcquireMachinePolling, EachPauseIsCappedByTheTimeLeft) {
  Fsm fsm = make_poller(100ms, warden::SpinBackoff::constant(64ms));
  EXPECT_EQ(fsm.held(t0, 30s).wait, 64ms);
  EXPECT_EQ(fsm.held(t0 + 70ms, 30s).wait, 30ms);
  EXPECT_EQ(fsm.held(t0 + 99ms + 500us, 30s).wait, 1ms);  // rounded up, never a busy zero
  EXPECT_EQ(fsm.held(t0 + 100ms, 30s).next, step::timed_out);
}

TEST(AcquireMachinePolling, APauseIsCappedByTheHoldersLease) {
  Fsm fsm = make_poller(std::nullopt, warden::SpinBackoff::constant(100ms));
  EXPECT_EQ(fsm.held(t0, 30ms).wait, 30ms);
  EXPECT_EQ(fsm.held(t0, 0ms).wait, 1ms);
  EXPECT_EQ(fsm.held(t0, -1ms).wait, 100ms);  // no expiry: the back-off alone
}

TEST(AcquireMachinePolling, APollerNeverJoinsBeforeATry) {
  Fsm fsm = make_poller(10s, warden::SpinBackoff::constant(5ms));
  EXPECT_FALSE(fsm.join_before_try(t0, true));
  EXPECT_FALSE(fsm.joined());
  EXPECT_EQ(fsm.held(t0, 30s).next, step::pause);
}

TEST(AcquireMachinePolling, ALostReplyIsStillReadBack) {
  Fsm fsm = make_poller(10s, warden::SpinBackoff{});
  EXPECT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1s, false).next, step::try_acquire);
}

// ---- replicas falling short (Config::replica_sync) ----

TEST(AcquireMachineReplicaShort, RefusalsForWantOfReplicasNeverEndAWaitWithoutADeadline) {
  // Right after a failover the new master may have no replica for a while:
  // lock() waits through it, however many tries are refused.
  Fsm fsm = make_fsm(std::nullopt);
  for (int i = 0; i < 100; ++i) {
    auto d = fsm.replica_short(t0 + std::chrono::seconds(i), false, 200ms);
    ASSERT_EQ(d.next, step::back_off) << i;
    EXPECT_EQ(d.wait, 200ms);
  }
}

TEST(AcquireMachineReplicaShort, UnacknowledgedTriesEndAWaitWithoutADeadlineAfterMaxUnknownMore) {
  Fsm fsm = make_fsm(std::nullopt);
  for (int i = 0; i < max_unknown; ++i) EXPECT_EQ(fsm.replica_short(t0, true, 50ms).next, step::back_off) << i;
  EXPECT_EQ(fsm.replica_short(t0, true, 50ms).next, step::failed);
}

TEST(AcquireMachineReplicaShort, RefusalsInBetweenDoNotCountTowardsTheFailure) {
  Fsm fsm = make_fsm(std::nullopt);
  for (int i = 0; i < max_unknown; ++i) {
    ASSERT_EQ(fsm.replica_short(t0, true, 50ms).next, step::back_off) << i;
    for (int j = 0; j < 10; ++j) ASSERT_EQ(fsm.replica_short(t0, false, 50ms).next, step::back_off) << i << "/" << j;
  }
  EXPECT_EQ(fsm.replica_short(t0, true, 50ms).next, step::failed);
}

TEST(AcquireMachineReplicaShort, ABoundedWaitBacksOffUntilItsDeadlineAndTriesLastAtIt) {
  Fsm fsm = make_fsm(1s);
  // Neither kind of shortfall ends it early, however many.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(fsm.replica_short(t0 + 10ms * i, i % 2 == 0, 100ms).next, step::back_off) << i;
  }
  // The delay is cut to the time left: the last try is made at the deadline.
  auto d = fsm.replica_short(t0 + 950ms, false, 100ms);
  EXPECT_EQ(d.next, step::back_off);
  EXPECT_EQ(d.wait, 50ms);
  EXPECT_EQ(fsm.replica_short(t0 + 999ms + 500us, false, 100ms).wait, 1ms);  // rounded up
  // Refused (or unacknowledged) at its deadline: it ends, replica_sync_failed.
  EXPECT_EQ(fsm.replica_short(t0 + 1s, false, 100ms).next, step::failed);
  EXPECT_EQ(fsm.replica_short(t0 + 2s, true, 100ms).next, step::failed);
}

TEST(AcquireMachineReplicaShort, ATryWithoutWaitFailsAtOnce) {
  Fsm fsm = make_fsm(0ms);
  EXPECT_EQ(fsm.replica_short(t0, false, 100ms).next, step::failed);
}

TEST(AcquireMachineReplicaShort, AHeldLockAfterRefusalsStillWaitsAsUsual) {
  Fsm fsm = make_fsm(std::nullopt);
  ASSERT_EQ(fsm.replica_short(t0, false, 100ms).next, step::back_off);
  auto d = fsm.held(t0 + 100ms, 5s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 5s);
}

}  // namespace
