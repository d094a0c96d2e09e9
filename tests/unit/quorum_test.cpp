// Vote counting, validity and budgets of the composite locks.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "quorum.hpp"

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
  EXPECT_EQ(node_budget(3s, 300ms), 50ms);  // the floor
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

}  // namespace
