// Vote counting, validity and budgets of the composite locks.
#include <gtest/gtest.h>

#include <chrono>
#include <variant>
#include <vector>

#include "composite/quorum.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using namespace warden::detail;

constexpr vote Y = vote::yes, B = vote::busy, F = vote::failed, P = vote::pending;

TEST(Quorum, IsAStrictMajority) {
  EXPECT_EQ(quorum_of(1), 1u);
  EXPECT_EQ(quorum_of(2), 2u);
  EXPECT_EQ(quorum_of(3), 2u);
  EXPECT_EQ(quorum_of(4), 3u);  // an even N tolerates no more failures than N-1
  EXPECT_EQ(quorum_of(5), 3u);
  EXPECT_EQ(quorum_of(6), 4u);
  EXPECT_EQ(quorum_of(7), 4u);
}

TEST(Quorum, CountsEachKindOfVote) {
  tally t = count_votes({Y, B, F, P, Y, F});
  EXPECT_EQ(t.yes, 2u);
  EXPECT_EQ(t.busy, 1u);
  EXPECT_EQ(t.failed, 2u);
  EXPECT_EQ(t.pending, 1u);
}

TEST(Quorum, DriftIsOnePercentPlusTwoMilliseconds) {
  EXPECT_EQ(clock_drift(10'000ms), 102ms);
  EXPECT_EQ(clock_drift(30'000ms), 302ms);
  EXPECT_EQ(clock_drift(150ms), 4ms);  // 1.5 ms rounds up to 2
  EXPECT_EQ(clock_drift(0ms), 2ms);
}

TEST(Quorum, ValidityIsLeaseMinusElapsedMinusDrift) {
  EXPECT_EQ(validity(10'000ms, 0ms), 9'898ms);
  EXPECT_EQ(validity(10'000ms, 898ms), 9'000ms);
  EXPECT_EQ(validity(10'000ms, 9'898ms), 0ms);
  EXPECT_LT(validity(10'000ms, 12'000ms), 0ms);
}

TEST(Quorum, AMajorityOfYesWithValidityLeftIsAcquired) {
  EXPECT_EQ(judge_quorum({Y, Y, Y}, 10s, 5ms), verdict::acquired);
  EXPECT_EQ(judge_quorum({Y, Y, B}, 10s, 5ms), verdict::acquired);
  EXPECT_EQ(judge_quorum({Y, F, Y}, 10s, 5ms), verdict::acquired);
  // Settled before the last node answers.
  EXPECT_EQ(judge_quorum({Y, Y, P}, 10s, 5ms), verdict::acquired);
  EXPECT_EQ(judge_quorum({Y, P, Y, F, Y}, 10s, 5ms), verdict::acquired);
}

TEST(Quorum, AQuorumTakenTooLateHasExpired) {
  EXPECT_EQ(judge_quorum({Y, Y, Y}, 1'000ms, 988ms), verdict::expired);  // 1000 - 988 - 12 = 0
  EXPECT_EQ(judge_quorum({Y, Y, Y}, 1'000ms, 987ms), verdict::acquired);
}

TEST(Quorum, MoreFailuresThanTheQuorumToleratesIsUnreachable) {
  EXPECT_EQ(judge_quorum({Y, F, F}, 10s, 5ms), verdict::unreachable);
  EXPECT_EQ(judge_quorum({F, F, P}, 10s, 5ms), verdict::unreachable);  // settled without the last node
  EXPECT_EQ(judge_quorum({Y, Y, F, F, F}, 10s, 5ms), verdict::unreachable);
  EXPECT_EQ(judge_quorum({B, B, F, F, F}, 10s, 5ms), verdict::unreachable);
}

TEST(Quorum, OtherOwnersOnTooManyNodesIsContention) {
  EXPECT_EQ(judge_quorum({Y, B, B}, 10s, 5ms), verdict::contended);
  EXPECT_EQ(judge_quorum({B, F, P}, 10s, 5ms), verdict::contended);  // at most one yes left: short of 2
  EXPECT_EQ(judge_quorum({Y, Y, B, B, F}, 10s, 5ms), verdict::contended);
  EXPECT_EQ(judge_quorum({B, B, B}, 10s, 5ms), verdict::contended);
}

TEST(Quorum, WaitsWhileThePendingNodesCanStillDecide) {
  EXPECT_EQ(judge_quorum({P, P, P}, 10s, 0ms), verdict::undecided);
  EXPECT_EQ(judge_quorum({Y, P, P}, 10s, 0ms), verdict::undecided);
  EXPECT_EQ(judge_quorum({Y, F, P}, 10s, 0ms), verdict::undecided);
  EXPECT_EQ(judge_quorum({Y, Y, F, F, P}, 10s, 0ms), verdict::undecided);
}

TEST(Quorum, EvenNodeCountsNeedMoreThanHalf) {
  EXPECT_EQ(judge_quorum({Y, Y, B, B}, 10s, 5ms), verdict::contended);  // a tie is no majority
  EXPECT_EQ(judge_quorum({Y, Y, Y, F}, 10s, 5ms), verdict::acquired);
  EXPECT_EQ(judge_quorum({Y, Y, F, F}, 10s, 5ms), verdict::unreachable);  // 4 nodes tolerate 1 failure, as 3 do
}

TEST(Quorum, AllOrNothingFailsOnTheFirstError) {
  EXPECT_EQ(judge_all({Y, F, P}), verdict::unreachable);
  EXPECT_EQ(judge_all({F}), verdict::unreachable);
  EXPECT_EQ(judge_all({Y, B, F}), verdict::unreachable);
}

TEST(Quorum, AllOrNothingWaitsForEveryMemberBeforeContention) {
  EXPECT_EQ(judge_all({Y, B, P}), verdict::undecided);
  EXPECT_EQ(judge_all({Y, B, Y}), verdict::contended);
  EXPECT_EQ(judge_all({Y, Y, P}), verdict::undecided);
  EXPECT_EQ(judge_all({Y, Y, Y}), verdict::acquired);
}

TEST(Quorum, NodeBudgetIsATenthOfTheLeaseCappedByTheCommandTimeout) {
  EXPECT_EQ(node_budget(3s, 30s), 3s);
  EXPECT_EQ(node_budget(1s, 30s), 1s);
  EXPECT_EQ(node_budget(3s, 10s), 1s);
  EXPECT_EQ(node_budget(3s, 2s), 200ms);
  EXPECT_EQ(node_budget(3s, 300ms), 50ms);    // the floor
  EXPECT_EQ(node_budget(20ms, 300ms), 20ms);  // the command timeout still caps it
  EXPECT_EQ(node_budget(0ms, 300ms), 1ms);
}

TEST(Quorum, ValidUntilIsTheQuorumThLatestBound) {
  clock::time_point t0{};
  std::vector<clock::time_point> held{t0 + 300ms, t0 + 100ms, t0 + 200ms};
  EXPECT_EQ(quorum_valid_until(held, 2), t0 + 200ms);
  EXPECT_EQ(quorum_valid_until(held, 1), t0 + 300ms);
  EXPECT_EQ(quorum_valid_until(held, 3), t0 + 100ms);
  EXPECT_EQ(quorum_valid_until(held, 4), clock::time_point::min());
  EXPECT_EQ(quorum_valid_until({}, 2), clock::time_point::min());
  EXPECT_EQ(quorum_valid_until(held, 0), clock::time_point::min());
}

TEST(Quorum, AnswersAreKnownOnlyWhenTheFailedNodesCannotChangeThem) {
  EXPECT_EQ(quorum_of_answers(3, 2, 1), quorum_answer::yes);
  EXPECT_EQ(quorum_of_answers(3, 3, 0), quorum_answer::yes);
  EXPECT_EQ(quorum_of_answers(3, 0, 1), quorum_answer::no);
  EXPECT_EQ(quorum_of_answers(3, 1, 1), quorum_answer::unknown);
  EXPECT_EQ(quorum_of_answers(5, 1, 1), quorum_answer::no);
  EXPECT_EQ(quorum_of_answers(5, 2, 1), quorum_answer::unknown);
  EXPECT_EQ(quorum_of_answers(5, 3, 2), quorum_answer::yes);
}

namespace validity_events {

using warden::detail::clock;
using warden::detail::QuorumValidity;

const clock::time_point t0 = clock::time_point{} + std::chrono::hours(1);
constexpr milliseconds lease = 900ms;
constexpr milliseconds drift = 11ms;  // clock_drift(900 ms)

// A hold of `nodes` nodes, each taken by the round that started at t0.
QuorumValidity taken_at_t0(std::size_t nodes) {
  QuorumValidity v(nodes);
  for (std::size_t i = 0; i < nodes; ++i) v.on(QuorumValidity::taken{i, t0 + lease - drift});
  return v;
}

TEST(QuorumValidity, IsTheQuorumThLatestConfirmedBound) {
  QuorumValidity v(3);
  v.on(QuorumValidity::taken{0, t0 + 500ms});
  v.on(QuorumValidity::taken{1, t0 + 700ms});
  EXPECT_EQ(v.valid_until(), t0 + 500ms);  // only two counted: both are needed
  v.on(QuorumValidity::taken{2, t0 + 600ms});
  EXPECT_EQ(v.valid_until(), t0 + 600ms);
  EXPECT_EQ(v.counted_count(), 3u);
  EXPECT_FALSE(v.lost());
}

TEST(QuorumValidity, RenewalsOfAMajorityMoveItForward) {
  auto v = taken_at_t0(3);
  EXPECT_TRUE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{0, t0 + 300ms, t0 + 300ms + lease - drift})));
  // One node alone vouches for nothing more: the majority still ends at the
  // round's bound.
  EXPECT_EQ(v.valid_until(), t0 + lease - drift);
  EXPECT_TRUE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{2, t0 + 310ms, t0 + 305ms + lease - drift})));
  EXPECT_EQ(v.valid_until(), t0 + 300ms + lease - drift);  // the second latest of three
  // An older confirmation never moves a bound back.
  EXPECT_TRUE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{0, t0 + 320ms, t0 + 100ms})));
  EXPECT_EQ(v.valid_until(), t0 + 300ms + lease - drift);
}

TEST(QuorumValidity, TimePassingTheMajorityBoundIsALoss) {
  auto v = taken_at_t0(3);
  v.on(QuorumValidity::time_passed{t0 + lease - drift - 1ms});
  EXPECT_FALSE(v.lost());
  v.on(QuorumValidity::time_passed{t0 + lease - drift});
  EXPECT_TRUE(v.lost());
  EXPECT_EQ(v.valid_until(), clock::time_point::min());
}

TEST(QuorumValidity, TheLossIsAnActionToldOnce) {
  auto v = taken_at_t0(3);
  EXPECT_TRUE(v.on(QuorumValidity::time_passed{t0 + lease - drift - 1ms}).empty());
  auto out = v.on(QuorumValidity::time_passed{t0 + lease - drift});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<QuorumValidity::hold_lost>(out[0]));
  EXPECT_TRUE(v.on(QuorumValidity::time_passed{t0 + lease}).empty());
  // A confirmation that comes too late neither counts nor tells it again.
  EXPECT_TRUE(v.on(QuorumValidity::confirmed{0, t0 + lease, t0 + 2 * lease}).empty());
}

TEST(QuorumValidity, OneNodeLostWhileTheOthersAreValidKeepsTheHold) {
  auto v = taken_at_t0(3);
  v.on(QuorumValidity::node_lost{1, t0 + 200ms});
  EXPECT_FALSE(v.lost());
  EXPECT_FALSE(v.counted(1));
  EXPECT_EQ(v.valid_until(), t0 + lease - drift);
  // Its re-take answers while the other two still confirm a majority.
  EXPECT_TRUE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{1, t0 + 250ms, t0 + 220ms + lease - drift})));
  EXPECT_TRUE(v.counted(1));
  // The re-taken node extends nothing on its own: a majority must confirm.
  EXPECT_EQ(v.valid_until(), t0 + lease - drift);
  EXPECT_TRUE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{0, t0 + 300ms, t0 + 290ms + lease - drift})));
  EXPECT_EQ(v.valid_until(), t0 + 220ms + lease - drift);
}

TEST(QuorumValidity, LosingTheSecondOfThreeNodesIsALoss) {
  auto v = taken_at_t0(3);
  v.on(QuorumValidity::node_lost{0, t0 + 100ms});
  EXPECT_FALSE(v.lost());
  v.on(QuorumValidity::node_lost{2, t0 + 150ms});
  EXPECT_TRUE(v.lost());
  EXPECT_EQ(v.valid_until(), clock::time_point::min());
}

// A holder stopped (SIGSTOP) past its lease: every node's bound lapses
// together; when it resumes the losses are reported one at a time and each
// re-take answers in between. The first loss already finds no majority valid:
// the hold is lost, and nothing taken afterwards counts.
TEST(QuorumValidity, AHolderStoppedPastItsLeaseIsLostAndNeverTakenBack) {
  auto v = taken_at_t0(3);
  v.on(QuorumValidity::confirmed{0, t0 + 300ms, t0 + 300ms + lease - drift});
  v.on(QuorumValidity::confirmed{1, t0 + 301ms, t0 + 300ms + lease - drift});
  v.on(QuorumValidity::confirmed{2, t0 + 302ms, t0 + 300ms + lease - drift});
  const auto resumed = t0 + 5s;  // stopped from t0 + 310 ms to here
  v.on(QuorumValidity::node_lost{0, resumed});
  EXPECT_TRUE(v.lost());
  EXPECT_EQ(v.counted_count(), 2u);    // still taken as far as the holder knows...
  EXPECT_EQ(v.valid_at(resumed), 0u);  // ...but none vouches for anything now
  EXPECT_FALSE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{0, resumed + 2ms, resumed + lease - drift})))
      << "re-take of node 0";
  v.on(QuorumValidity::node_lost{1, resumed + 3ms});
  EXPECT_FALSE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{1, resumed + 4ms, resumed + lease - drift})))
      << "re-take of node 1";
  EXPECT_FALSE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{2, resumed + 5ms, resumed + lease - drift})))
      << "a late renewal of node 2";
  EXPECT_TRUE(v.lost());
  EXPECT_EQ(v.valid_until(), clock::time_point::min());
  EXPECT_FALSE(v.counted(0));
  EXPECT_FALSE(v.counted(1));
}

// The same stop, but a renewal sent before it answers only after the
// majority lapsed: it does not bring the hold back, whatever it vouches for.
TEST(QuorumValidity, AConfirmationAfterTheMajorityLapsedDoesNotReviveIt) {
  auto v = taken_at_t0(3);
  EXPECT_FALSE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{0, t0 + lease, t0 + 2 * lease})));
  EXPECT_TRUE(v.lost());
  EXPECT_FALSE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{1, t0 + lease, t0 + 2 * lease})));
  EXPECT_EQ(v.valid_until(), clock::time_point::min());
}

TEST(QuorumValidity, AReTakeAfterTheOthersLapsedDoesNotCount) {
  auto v = taken_at_t0(3);
  v.on(QuorumValidity::node_lost{0, t0 + 100ms});
  // Nodes 1 and 2 were not renewed: by the time the re-take answers, they
  // vouch for nothing, and another owner may have held the lock.
  EXPECT_FALSE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{0, t0 + lease, t0 + 100ms + lease - drift})));
  EXPECT_TRUE(v.lost());
}

TEST(QuorumValidity, FiveNodesTolerateTwoLosses) {
  auto v = taken_at_t0(5);
  v.on(QuorumValidity::node_lost{0, t0 + 10ms});
  v.on(QuorumValidity::node_lost{1, t0 + 20ms});
  EXPECT_FALSE(v.lost());
  EXPECT_EQ(v.counted_count(), 3u);
  v.on(QuorumValidity::node_lost{4, t0 + 30ms});
  EXPECT_TRUE(v.lost());
}

TEST(QuorumValidity, ANodeTheRoundDidNotTakeCountsOnceItConfirmsInTime) {
  QuorumValidity v(3);
  v.on(QuorumValidity::taken{0, t0 + lease - drift});
  v.on(QuorumValidity::taken{1, t0 + lease - drift});
  // Node 2 answered the round after it was settled.
  EXPECT_TRUE(QuorumValidity::counts(v.on(QuorumValidity::confirmed{2, t0 + 50ms, t0 + lease - drift})));
  EXPECT_EQ(v.counted_count(), 3u);
  v.on(QuorumValidity::node_lost{0, t0 + 60ms});
  EXPECT_FALSE(v.lost());
}

}  // namespace validity_events

}  // namespace
