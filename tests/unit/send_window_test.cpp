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

// Answers `count` commands that the server began on `took` ago, each with
// `ahead` commands in flight ahead of it when written.
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

TEST(SendWindow, LearnsThePaceFromAnswersThatQueued) {
  SendWindow window(1000);
  // Reads of ten answers 10 ms apart: one interval, nine zeros each, 1 ms a
  // command on average.
  for (int read = 0; read < 50; ++read) {
    answer(window, t0, 10ms, 500);
    answer(window, t0, 0ms, 500, 9);
  }
  EXPECT_NEAR(window.per_command() / 1us, 1000, 300);
  // Behind 500 it waits about half a second.
  EXPECT_EQ(offer(window, t0, t0 + 300ms, 500), verdict::fail_unsent);
  EXPECT_EQ(offer(window, t0, t0 + 900ms, 500), verdict::write);
  EXPECT_EQ(offer(window, t0, t0 + 300ms, 100), verdict::write);
}

TEST(SendWindow, ARoundTripIsNotThePace) {
  // Answers with nothing ahead (a far server, one command at a time) teach
  // nothing: a burst after them is not judged by their round trip.
  SendWindow window(1000);
  answer(window, t0, 50ms, 0, 100);
  EXPECT_EQ(window.per_command(), 0us);
  EXPECT_EQ(offer(window, t0, t0 + 1s, 999), verdict::write);
}

TEST(SendWindow, HoldsOnlyWhatCouldStillBeAnswered) {
  SendWindow window(4);
  answer(window, t0, 20ms, 3, 200);  // the server is slow: 20 ms a command
  EXPECT_EQ(offer(window, t0, t0 + 1s, 4), verdict::hold);
  EXPECT_EQ(offer(window, t0, t0 + 50ms, 4), verdict::fail_unsent);
}

TEST(SendWindow, NothingAheadIsAlwaysInTime) {
  // After a stall, however slow the server was, a command with nothing in
  // flight ahead of it is written while its deadline lasts.
  SendWindow window(4);
  answer(window, t0, 3s, 3, 200);
  EXPECT_EQ(offer(window, t0, t0 + 2s, 3), verdict::fail_unsent);
  EXPECT_EQ(offer(window, t0, t0 + 2s, 0), verdict::write);
}

TEST(SendWindow, ANewLinkForgetsTheOldPace) {
  SendWindow window(4);
  answer(window, t0, 2s, 1, 200);
  EXPECT_EQ(offer(window, t0, t0 + 1s, 1), verdict::fail_unsent);
  EXPECT_TRUE(window.on(SendWindow::link_reset{}).empty());
  EXPECT_EQ(window.expected(3), 0us);
  EXPECT_EQ(offer(window, t0, t0 + 1s, 1), verdict::write);
}

TEST(SendWindow, AnAnswerBeforeItsStartCountsAsInstant) {
  SendWindow window(4);
  EXPECT_TRUE(window.on(SendWindow::answered{t0, t0 + 1s, 2}).empty());
  EXPECT_EQ(window.expected(3), 0us);
}

}  // namespace
