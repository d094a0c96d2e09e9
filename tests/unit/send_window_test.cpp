// SendWindow: how many commands one connection may have unanswered, and
// whether a queued command may still be written before its deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <variant>

#include "io/send_window.hpp"

namespace {

using namespace std::chrono_literals;
using warden::detail::clock;
using warden::detail::SendWindow;

enum class verdict { write, hold, fail_unsent };

verdict offer(SendWindow& window, clock::time_point now, clock::time_point deadline, std::size_t in_flight) {
  auto actions = window.on(SendWindow::offered{now, deadline, in_flight});
  EXPECT_EQ(actions.size(), 1u);
  if (std::holds_alternative<SendWindow::write>(actions[0])) return verdict::write;
  if (std::holds_alternative<SendWindow::hold>(actions[0])) return verdict::hold;
  return verdict::fail_unsent;
}

// Answers `count` commands that each took `took` with `ahead` in flight ahead
// of them when written.
void answer(SendWindow& window, clock::time_point now, clock::duration took, std::size_t ahead, int count = 1) {
  for (int i = 0; i < count; ++i) EXPECT_TRUE(window.on(SendWindow::answered{now, now - took, ahead}).empty());
}

const clock::time_point t0 = clock::time_point{} + 1000s;

TEST(SendWindow, WritesWhileTheWindowHasRoom) {
  SendWindow window(4);
  EXPECT_EQ(offer(window, t0, t0 + 3s, 0), verdict::write);
  EXPECT_EQ(offer(window, t0, t0 + 3s, 3), verdict::write);
}

TEST(SendWindow, HoldsWhenTheWindowIsFull) {
  SendWindow window(4);
  EXPECT_EQ(offer(window, t0, t0 + 3s, 4), verdict::hold);
  EXPECT_EQ(offer(window, t0, t0 + 3s, 5), verdict::hold);
}

TEST(SendWindow, WithoutALimitNeverHolds) {
  SendWindow window(0);
  EXPECT_EQ(offer(window, t0, t0 + 3s, 1'000'000), verdict::write);
}

TEST(SendWindow, FailsACommandWhoseDeadlinePassedUnwritten) {
  SendWindow window(4);
  EXPECT_EQ(offer(window, t0, t0, 0), verdict::fail_unsent);
  EXPECT_EQ(offer(window, t0, t0 - 1ms, 0), verdict::fail_unsent);
  // Even with the window full: it is failed at once, not held.
  EXPECT_EQ(offer(window, t0, t0 - 1ms, 4), verdict::fail_unsent);
}

TEST(SendWindow, ExpectsARoundTripPlusTheServersWorkAhead) {
  SendWindow window(1000);
  answer(window, t0, 2ms, 0, 30);      // alone: a 2 ms round trip
  answer(window, t0, 102ms, 100, 30);  // behind 100: 1 ms of server work each
  EXPECT_NEAR(window.round_trip() / 1us, 2000, 100);
  EXPECT_NEAR(window.per_command() / 1us, 1000, 50);
  EXPECT_NEAR(window.expected(500) / 1us, 502'000, 30'000);
  // Behind 500 it needs about half a second; pipelined, round trips overlap.
  EXPECT_EQ(offer(window, t0, t0 + 400ms, 500), verdict::fail_unsent);
  EXPECT_EQ(offer(window, t0, t0 + 600ms, 500), verdict::write);
  EXPECT_EQ(offer(window, t0, t0 + 400ms, 300), verdict::write);
}

TEST(SendWindow, HoldsOnlyWhatCouldStillBeAnswered) {
  SendWindow window(4);
  answer(window, t0, 50ms, 3, 30);  // the server is slow: about 17 ms a command
  EXPECT_EQ(offer(window, t0, t0 + 1s, 4), verdict::hold);
  EXPECT_EQ(offer(window, t0, t0 + 10ms, 4), verdict::fail_unsent);
}

TEST(SendWindow, TheEstimateRisesFastAndFallsSlowly) {
  SendWindow window(4);
  answer(window, t0, 1ms, 0, 10);
  auto quick = window.round_trip();
  answer(window, t0, 401ms, 0);
  EXPECT_GE(window.round_trip(), 200ms);  // half way in one answer
  auto slow = window.round_trip();
  answer(window, t0, 1ms, 0);
  // One quick answer takes an eighth of the way back, not the whole.
  EXPECT_GT(window.round_trip(), slow - slow / 7);
  answer(window, t0, 1ms, 0, 200);
  EXPECT_LE(window.round_trip(), quick + 1ms);
}

TEST(SendWindow, AnExpiredCommandCountsAsSlow) {
  // A server that stopped answering: the time-outs are its only news.
  SendWindow window(4);
  answer(window, t0, 3s, 3, 4);
  EXPECT_EQ(offer(window, t0, t0 + 1s, 3), verdict::fail_unsent);
}

TEST(SendWindow, AfterAStallAnEmptyLinkWritesAgain) {
  // A window of commands timed out behind one another; once they are
  // answered (or gone) nothing is ahead of a new command, which is written.
  SendWindow window(4);
  answer(window, t0, 3s, 3, 10);
  EXPECT_EQ(offer(window, t0, t0 + 2s, 3), verdict::fail_unsent);
  EXPECT_EQ(offer(window, t0, t0 + 2s, 0), verdict::write);
}

TEST(SendWindow, ANewLinkForgetsTheOldPace) {
  SendWindow window(4);
  answer(window, t0, 2s, 0, 10);
  EXPECT_EQ(offer(window, t0, t0 + 1s, 0), verdict::fail_unsent);
  EXPECT_TRUE(window.on(SendWindow::link_reset{}).empty());
  EXPECT_EQ(window.expected(3), 0us);
  EXPECT_EQ(offer(window, t0, t0 + 1s, 0), verdict::write);
}

TEST(SendWindow, AnAnswerReadBeforeItsWriteTimeCountsAsInstant) {
  SendWindow window(4);
  EXPECT_TRUE(window.on(SendWindow::answered{t0, t0 + 1s, 0}).empty());
  EXPECT_EQ(window.expected(0), 0us);
}

}  // namespace
