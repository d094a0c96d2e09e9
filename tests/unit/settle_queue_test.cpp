// SettleQueue: settles sent in order, a paced few at a time, also when a
// send is answered at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "lock/settle_queue.hpp"

namespace {

using warden::detail::SettleQueue;

TEST(SettleQueue, SendsInOrderAsAnswersCome) {
  SettleQueue queue(2);
  std::vector<int> sent;
  for (int i = 0; i < 5; ++i) queue.submit([&sent, i] { sent.push_back(i); });
  EXPECT_EQ(sent, (std::vector<int>{0, 1}));
  queue.answered();
  EXPECT_EQ(sent, (std::vector<int>{0, 1, 2}));
  queue.answered();
  queue.answered();
  EXPECT_EQ(sent, (std::vector<int>{0, 1, 2, 3, 4}));
  queue.answered();
  queue.answered();
  EXPECT_EQ(queue.pacer().in_flight(), 0u);
}

TEST(SettleQueue, SendsAnsweredAtOnceDrainWithoutNesting) {
  // A shutting-down client answers every send inside it: the whole queue
  // goes, in order, from one loop.
  SettleQueue queue(1);
  std::vector<int> sent;
  int depth = 0;
  int deepest = 0;
  bool hold_first = true;
  std::function<void(int)> send = [&](int i) {
    ++depth;
    deepest = std::max(deepest, depth);
    sent.push_back(i);
    if (!hold_first) queue.answered();
    --depth;
  };
  queue.submit([&] { send(0); });  // in flight, unanswered
  for (int i = 1; i < 1000; ++i) queue.submit([&send, i] { send(i); });
  EXPECT_EQ(sent.size(), 1u);
  hold_first = false;
  queue.answered();
  ASSERT_EQ(sent.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(sent[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(deepest, 1);
  EXPECT_EQ(queue.pacer().in_flight(), 0u);
  EXPECT_EQ(queue.pacer().waiting(), 0u);
}

}  // namespace
