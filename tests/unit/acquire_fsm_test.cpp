// AcquireFsm: the decisions of one lock acquire.
#include <gtest/gtest.h>

#include <warden/spin_lock.hpp>

#include <chrono>
#include <optional>

#include "lock/acquire_fsm.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::detail::AcquireFsm;
using warden::detail::clock;
using step = AcquireFsm::step;

const clock::time_point t0 = clock::time_point{} + 1000h;
constexpr milliseconds unknown_ttl_wait = 5s;
constexpr int max_unknown = 3;

AcquireFsm make_fsm(std::optional<milliseconds> wait, int unknowns = max_unknown) {
  return AcquireFsm(t0, wait, unknowns, unknown_ttl_wait);
}

TEST(AcquireFsm, StartTriesToAcquire) {
  AcquireFsm fsm = make_fsm(10s);
  EXPECT_EQ(fsm.start().next, step::try_acquire);
  EXPECT_FALSE(fsm.joined());
}

TEST(AcquireFsm, DeadlineIsStartPlusWait) {
  EXPECT_EQ(make_fsm(10s).deadline(), t0 + 10s);
  EXPECT_EQ(make_fsm(0ms).deadline(), t0);
  EXPECT_FALSE(make_fsm(std::nullopt).deadline().has_value());
}

TEST(AcquireFsm, AcquiredIsDone) {
  AcquireFsm fsm = make_fsm(10s);
  EXPECT_EQ(fsm.acquired().next, step::acquired);
}

TEST(AcquireFsm, FirstHeldSubscribesWithTtlWhenTtlIsShorter) {
  AcquireFsm fsm = make_fsm(10s);
  AcquireFsm::decision d = fsm.held(t0 + 1s, 2s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 2s);
  EXPECT_TRUE(fsm.joined());
}

TEST(AcquireFsm, FirstHeldSubscribesWithTimeLeftWhenThatIsShorter) {
  AcquireFsm fsm = make_fsm(10s);
  AcquireFsm::decision d = fsm.held(t0 + 7s, 30s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 3s);
}

TEST(AcquireFsm, TimeLeftIsRoundedUpToWholeMilliseconds) {
  AcquireFsm fsm = make_fsm(10s);
  AcquireFsm::decision d = fsm.held(t0 + 9s + 998500us, 30s);  // 1.5 ms left
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 2ms);
}

TEST(AcquireFsm, SubscribedAndWokenRetry) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  EXPECT_EQ(fsm.subscribed().next, step::try_acquire);
  EXPECT_EQ(fsm.woken().next, step::try_acquire);
}

TEST(AcquireFsm, HeldAgainSleepsWithMinOfTtlAndTimeLeft) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.held(t0, 1s).next, step::subscribe);

  AcquireFsm::decision d = fsm.held(t0 + 1s, 4s);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, 4s);

  d = fsm.held(t0 + 8s, 4s);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, 2s);
  EXPECT_TRUE(fsm.joined());
}

TEST(AcquireFsm, SubscribesOnlyOnce) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  EXPECT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(fsm.held(t0 + i * 1s, 1s).next, step::sleep) << i;
}

TEST(AcquireFsm, ZeroTtlIsAKeyInItsLastMillisecond) {
  // PTTL 0: the key expires within the millisecond. Waiting as if it had no
  // expiry would sleep out unknown_ttl_wait on a lock about to be free.
  AcquireFsm fsm = make_fsm(std::nullopt);
  AcquireFsm::decision d = fsm.held(t0, 0ms);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 1ms);
}

TEST(AcquireFsm, NegativeTtlUsesUnknownTtlWait) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  ASSERT_EQ(fsm.held(t0, -1ms).wait, unknown_ttl_wait);  // PTTL -1: no expiry
  AcquireFsm::decision d = fsm.held(t0 + 1s, -2ms);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, unknown_ttl_wait);
}

TEST(AcquireFsm, UnknownTtlWaitIsStillCappedByTimeLeft) {
  AcquireFsm fsm = make_fsm(10s);
  AcquireFsm::decision d = fsm.held(t0 + 8s, -1ms);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 2s);
}

TEST(AcquireFsm, HeldAtTheDeadlineTimesOut) {
  AcquireFsm fsm = make_fsm(10s);
  EXPECT_EQ(fsm.held(t0 + 10s, 1s).next, step::timed_out);
}

TEST(AcquireFsm, HeldPastTheDeadlineTimesOut) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.held(t0 + 1s, 1s).next, step::subscribe);
  EXPECT_EQ(fsm.held(t0 + 10s + 1ms, 1s).next, step::timed_out);
  EXPECT_EQ(fsm.held(t0 + 1h, 0ms).next, step::timed_out);
}

TEST(AcquireFsm, HeldJustBeforeTheDeadlineWaitsTheRest) {
  AcquireFsm fsm = make_fsm(10s);
  AcquireFsm::decision d = fsm.held(t0 + 10s - 1ms, 1s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 1ms);
}

TEST(AcquireFsm, ZeroWaitTriesOnceThenTimesOut) {
  AcquireFsm fsm = make_fsm(0ms);
  EXPECT_EQ(fsm.start().next, step::try_acquire);
  EXPECT_EQ(fsm.held(t0, 10s).next, step::timed_out);
  EXPECT_FALSE(fsm.joined());  // never subscribed
}

TEST(AcquireFsm, NoDeadlineNeverTimesOut) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  AcquireFsm::decision d = fsm.held(t0, 30s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 30s);
  d = fsm.held(t0 + 24h * 365, 30s);
  EXPECT_EQ(d.next, step::sleep);
  EXPECT_EQ(d.wait, 30s);  // the TTL alone, not capped
  EXPECT_EQ(fsm.read_back(t0 + 24h * 3650, false).next, step::try_acquire);
}

TEST(AcquireFsm, UnknownReadsBackUpToMaxUnknownTimesThenFails) {
  AcquireFsm fsm = make_fsm(10s);
  for (int i = 0; i < max_unknown; ++i) EXPECT_EQ(fsm.unknown().next, step::read_back) << i;
  EXPECT_EQ(fsm.unknown().next, step::failed);
  EXPECT_EQ(fsm.unknown().next, step::failed);
}

TEST(AcquireFsm, ZeroMaxUnknownFailsAtOnce) {
  AcquireFsm fsm = make_fsm(10s, 0);
  EXPECT_EQ(fsm.unknown().next, step::failed);
}

TEST(AcquireFsm, UnknownsCountAcrossRetries) {
  AcquireFsm fsm = make_fsm(std::nullopt, 2);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  ASSERT_EQ(fsm.read_back(t0 + 1s, false).next, step::try_acquire);
  ASSERT_EQ(fsm.held(t0 + 2s, 1s).next, step::subscribe);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  ASSERT_EQ(fsm.read_back(t0 + 3s, false).next, step::try_acquire);
  EXPECT_EQ(fsm.unknown().next, step::failed);
}

TEST(AcquireFsm, ReadBackAppliedIsAcquired) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1s, true).next, step::acquired);
}

TEST(AcquireFsm, ReadBackAppliedIsAcquiredEvenPastTheDeadline) {
  // The lock is held: reporting a time-out would leak it.
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1h, true).next, step::acquired);
}

TEST(AcquireFsm, ReadBackNotAppliedRetries) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 9s, false).next, step::try_acquire);
}

TEST(AcquireFsm, ReadBackNotAppliedPastTheDeadlineTimesOut) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 10s, false).next, step::timed_out);
  EXPECT_EQ(fsm.read_back(t0 + 11s, false).next, step::timed_out);
}

// Disabled until src/acquire_fsm.cpp saturates the deadline: start + milliseconds::max()
// overflows clock::duration (nanoseconds), so a "wait for ever" passed as a huge duration
// currently times out after the first try.
TEST(AcquireFsm, HugeWaitDoesNotOverflowIntoAnEarlyTimeOut) {
  AcquireFsm fsm = make_fsm(milliseconds::max());
  AcquireFsm::decision d = fsm.held(t0 + 1s, 30s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 30s);
  EXPECT_EQ(fsm.read_back(t0 + 24h, false).next, step::try_acquire);
}

// ---- joining before the first try (the channel is already subscribed) ----

TEST(AcquireFsmJoinBeforeTry, AConfirmedChannelJoinsAndAHeldLockSleepsAtOnce) {
  AcquireFsm fsm = make_fsm(10s);
  EXPECT_TRUE(fsm.join_before_try(t0, true));
  EXPECT_TRUE(fsm.joined());
  AcquireFsm::decision d = fsm.held(t0 + 1s, 2s);
  EXPECT_EQ(d.next, step::sleep);  // no subscribe, so no re-try after it
  EXPECT_EQ(d.wait, 2s);
  EXPECT_EQ(fsm.woken().next, step::try_acquire);
  EXPECT_EQ(fsm.held(t0 + 2s, 2s).next, step::sleep);
}

TEST(AcquireFsmJoinBeforeTry, AnUnconfirmedChannelTakesTheSubscribeAndReTryPath) {
  AcquireFsm fsm = make_fsm(10s);
  EXPECT_FALSE(fsm.join_before_try(t0, false));
  EXPECT_FALSE(fsm.joined());
  EXPECT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  EXPECT_EQ(fsm.subscribed().next, step::try_acquire);
}

TEST(AcquireFsmJoinBeforeTry, OnlyTheFirstTryJoins) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  ASSERT_EQ(fsm.held(t0, 1s).next, step::subscribe);
  EXPECT_FALSE(fsm.join_before_try(t0 + 1s, true));  // joined by subscribing already
  AcquireFsm early = make_fsm(std::nullopt);
  ASSERT_TRUE(early.join_before_try(t0, true));
  EXPECT_FALSE(early.join_before_try(t0 + 1s, true));  // joined once is enough
}

TEST(AcquireFsmJoinBeforeTry, TheLastTryNeverJoins) {
  AcquireFsm zero = make_fsm(0ms);  // try_lock(): one try, no waiting
  EXPECT_FALSE(zero.join_before_try(t0, true));
  EXPECT_EQ(zero.held(t0, 10s).next, step::timed_out);
  EXPECT_FALSE(zero.joined());
  AcquireFsm bounded = make_fsm(10s);
  EXPECT_FALSE(bounded.join_before_try(t0 + 10s, true));
  EXPECT_TRUE(bounded.join_before_try(t0 + 10s - 1ms, true));
}

TEST(AcquireFsmJoinBeforeTry, AReadBackKeepsTheEarlyJoin) {
  AcquireFsm fsm = make_fsm(10s);
  ASSERT_TRUE(fsm.join_before_try(t0, true));
  EXPECT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1s, false).next, step::try_acquire);
  EXPECT_FALSE(fsm.join_before_try(t0 + 1s, true));
  EXPECT_EQ(fsm.held(t0 + 1s, 1s).next, step::sleep);
}

// ---- polling (SpinLock): pauses on the back-off, never subscribes ----

AcquireFsm make_poller(std::optional<milliseconds> wait, warden::SpinBackoff backoff) {
  return AcquireFsm(t0, wait, max_unknown, unknown_ttl_wait, warden::detail::SpinDelays(backoff, 1));
}

TEST(AcquireFsmPolling, PausesOnTheBackoffAndNeverSubscribes) {
  AcquireFsm fsm = make_poller(std::nullopt, warden::SpinBackoff{1ms, 8ms, 2, 0ms});
  for (milliseconds expected : {1ms, 2ms, 4ms, 8ms, 8ms, 8ms}) {
    AcquireFsm::decision d = fsm.held(t0 + 1s, 30s);
    EXPECT_EQ(d.next, step::pause);
    EXPECT_EQ(d.wait, expected);
    EXPECT_EQ(fsm.woken().next, step::try_acquire);
  }
  EXPECT_FALSE(fsm.joined());
}

TEST(AcquireFsmPolling, EachPauseIsCappedByTheTimeLeft) {
  AcquireFsm fsm = make_poller(100ms, warden::SpinBackoff::constant(64ms));
  EXPECT_EQ(fsm.held(t0, 30s).wait, 64ms);
  EXPECT_EQ(fsm.held(t0 + 70ms, 30s).wait, 30ms);
  EXPECT_EQ(fsm.held(t0 + 99ms + 500us, 30s).wait, 1ms);  // rounded up, never a busy zero
  EXPECT_EQ(fsm.held(t0 + 100ms, 30s).next, step::timed_out);
}

TEST(AcquireFsmPolling, APauseIsCappedByTheHoldersLease) {
  AcquireFsm fsm = make_poller(std::nullopt, warden::SpinBackoff::constant(100ms));
  EXPECT_EQ(fsm.held(t0, 30ms).wait, 30ms);
  EXPECT_EQ(fsm.held(t0, 0ms).wait, 1ms);
  EXPECT_EQ(fsm.held(t0, -1ms).wait, 100ms);  // no expiry: the back-off alone
}

TEST(AcquireFsmPolling, APollerNeverJoinsBeforeATry) {
  AcquireFsm fsm = make_poller(10s, warden::SpinBackoff::constant(5ms));
  EXPECT_FALSE(fsm.join_before_try(t0, true));
  EXPECT_FALSE(fsm.joined());
  EXPECT_EQ(fsm.held(t0, 30s).next, step::pause);
}

TEST(AcquireFsmPolling, ALostReplyIsStillReadBack) {
  AcquireFsm fsm = make_poller(10s, warden::SpinBackoff{});
  EXPECT_EQ(fsm.unknown().next, step::read_back);
  EXPECT_EQ(fsm.read_back(t0 + 1s, false).next, step::try_acquire);
}

// ---- replicas falling short (Config::replica_sync) ----

TEST(AcquireFsmReplicaShort, RefusalsForWantOfReplicasNeverEndAWaitWithoutADeadline) {
  // Right after a failover the new master may have no replica for a while:
  // lock() waits through it, however many tries are refused.
  AcquireFsm fsm = make_fsm(std::nullopt);
  for (int i = 0; i < 100; ++i) {
    auto d = fsm.replica_short(t0 + std::chrono::seconds(i), false, 200ms);
    ASSERT_EQ(d.next, step::back_off) << i;
    EXPECT_EQ(d.wait, 200ms);
  }
}

TEST(AcquireFsmReplicaShort, UnacknowledgedTriesEndAWaitWithoutADeadlineAfterMaxUnknownMore) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  for (int i = 0; i < max_unknown; ++i) EXPECT_EQ(fsm.replica_short(t0, true, 50ms).next, step::back_off) << i;
  EXPECT_EQ(fsm.replica_short(t0, true, 50ms).next, step::failed);
}

TEST(AcquireFsmReplicaShort, RefusalsInBetweenDoNotCountTowardsTheFailure) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  for (int i = 0; i < max_unknown; ++i) {
    ASSERT_EQ(fsm.replica_short(t0, true, 50ms).next, step::back_off) << i;
    for (int j = 0; j < 10; ++j) ASSERT_EQ(fsm.replica_short(t0, false, 50ms).next, step::back_off) << i << "/" << j;
  }
  EXPECT_EQ(fsm.replica_short(t0, true, 50ms).next, step::failed);
}

TEST(AcquireFsmReplicaShort, ABoundedWaitBacksOffUntilItsDeadlineAndTriesLastAtIt) {
  AcquireFsm fsm = make_fsm(1s);
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

TEST(AcquireFsmReplicaShort, ATryWithoutWaitFailsAtOnce) {
  AcquireFsm fsm = make_fsm(0ms);
  EXPECT_EQ(fsm.replica_short(t0, false, 100ms).next, step::failed);
}

TEST(AcquireFsmReplicaShort, AHeldLockAfterRefusalsStillWaitsAsUsual) {
  AcquireFsm fsm = make_fsm(std::nullopt);
  ASSERT_EQ(fsm.replica_short(t0, false, 100ms).next, step::back_off);
  auto d = fsm.held(t0 + 100ms, 5s);
  EXPECT_EQ(d.next, step::subscribe);
  EXPECT_EQ(d.wait, 5s);
}

}  // namespace
