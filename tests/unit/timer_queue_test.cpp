// TimerQueue: deadlines in time order, ties in insertion order, cancel.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "io/timer_queue.hpp"

namespace {

using namespace std::chrono_literals;
using warden::detail::clock;
using warden::detail::TimerQueue;

const clock::time_point t0 = clock::time_point{} + 1h;

// Runs every callback in `due`, in order.
void run(const std::vector<std::function<void()>>& due) {
  for (const auto& fn : due) fn();
}

TEST(TimerQueue, StartsEmpty) {
  TimerQueue queue;
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.next().has_value());
  EXPECT_TRUE(queue.take_due(t0 + 24h).empty());
}

TEST(TimerQueue, IdsAreNonZeroAndUnique) {
  TimerQueue queue;
  TimerQueue::id a = queue.add(t0, [] {});
  TimerQueue::id b = queue.add(t0, [] {});
  TimerQueue::id c = queue.add(t0 - 1s, [] {});
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  EXPECT_NE(c, 0u);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
  EXPECT_EQ(queue.size(), 3u);
}

TEST(TimerQueue, NextIsTheEarliestDeadline) {
  TimerQueue queue;
  queue.add(t0 + 30ms, [] {});
  EXPECT_EQ(queue.next(), t0 + 30ms);
  queue.add(t0 + 10ms, [] {});
  EXPECT_EQ(queue.next(), t0 + 10ms);
  queue.add(t0 + 20ms, [] {});
  EXPECT_EQ(queue.next(), t0 + 10ms);
}

TEST(TimerQueue, TakeDueReturnsEarliestFirstRegardlessOfInsertionOrder) {
  TimerQueue queue;
  std::string order;
  queue.add(t0 + 30ms, [&] { order += 'c'; });
  queue.add(t0 + 10ms, [&] { order += 'a'; });
  queue.add(t0 + 20ms, [&] { order += 'b'; });
  run(queue.take_due(t0 + 30ms));
  EXPECT_EQ(order, "abc");
  EXPECT_EQ(queue.size(), 0u);
}

TEST(TimerQueue, TiesRunInInsertionOrder) {
  TimerQueue queue;
  std::string order;
  queue.add(t0, [&] { order += '1'; });
  queue.add(t0, [&] { order += '2'; });
  queue.add(t0 - 1ms, [&] { order += '0'; });
  queue.add(t0, [&] { order += '3'; });
  queue.add(t0, [&] { order += '4'; });
  run(queue.take_due(t0));
  EXPECT_EQ(order, "01234");
}

TEST(TimerQueue, TakeDueLeavesFutureTimers) {
  TimerQueue queue;
  std::string order;
  queue.add(t0 + 10ms, [&] { order += 'a'; });
  queue.add(t0 + 20ms, [&] { order += 'b'; });
  queue.add(t0 + 30ms, [&] { order += 'c'; });

  EXPECT_TRUE(queue.take_due(t0 + 9ms).empty());
  EXPECT_EQ(queue.size(), 3u);

  run(queue.take_due(t0 + 20ms));  // a deadline equal to now is due
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.next(), t0 + 30ms);

  run(queue.take_due(t0 + 29ms));
  EXPECT_EQ(order, "ab");
  run(queue.take_due(t0 + 1h));
  EXPECT_EQ(order, "abc");
  EXPECT_FALSE(queue.next().has_value());
}

TEST(TimerQueue, TakeDueDoesNotRunCallbacks) {
  TimerQueue queue;
  int runs = 0;
  queue.add(t0, [&] { ++runs; });
  auto due = queue.take_due(t0);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(runs, 0);
  due.front()();
  EXPECT_EQ(runs, 1);
}

TEST(TimerQueue, CancelRemovesTimer) {
  TimerQueue queue;
  std::string order;
  queue.add(t0 + 1ms, [&] { order += 'a'; });
  TimerQueue::id b = queue.add(t0 + 2ms, [&] { order += 'b'; });
  queue.add(t0 + 3ms, [&] { order += 'c'; });
  EXPECT_TRUE(queue.cancel(b));
  EXPECT_EQ(queue.size(), 2u);
  run(queue.take_due(t0 + 1s));
  EXPECT_EQ(order, "ac");
}

TEST(TimerQueue, CancelOfEarliestMovesNext) {
  TimerQueue queue;
  TimerQueue::id a = queue.add(t0 + 1ms, [] {});
  queue.add(t0 + 5ms, [] {});
  EXPECT_TRUE(queue.cancel(a));
  EXPECT_EQ(queue.next(), t0 + 5ms);
}

TEST(TimerQueue, CancelOneOfTiedTimersKeepsTheOthers) {
  TimerQueue queue;
  std::string order;
  queue.add(t0, [&] { order += '1'; });
  TimerQueue::id two = queue.add(t0, [&] { order += '2'; });
  queue.add(t0, [&] { order += '3'; });
  EXPECT_TRUE(queue.cancel(two));
  run(queue.take_due(t0));
  EXPECT_EQ(order, "13");
}

TEST(TimerQueue, CancelTwiceIsFalse) {
  TimerQueue queue;
  TimerQueue::id a = queue.add(t0, [] {});
  EXPECT_TRUE(queue.cancel(a));
  EXPECT_FALSE(queue.cancel(a));
}

TEST(TimerQueue, CancelAfterRunIsFalse) {
  TimerQueue queue;
  TimerQueue::id a = queue.add(t0, [] {});
  EXPECT_EQ(queue.take_due(t0).size(), 1u);
  EXPECT_FALSE(queue.cancel(a));
}

TEST(TimerQueue, CancelUnknownIdIsFalse) {
  TimerQueue queue;
  EXPECT_FALSE(queue.cancel(0));
  EXPECT_FALSE(queue.cancel(12345));
  queue.add(t0, [] {});
  EXPECT_FALSE(queue.cancel(0));
  EXPECT_EQ(queue.size(), 1u);
}

TEST(TimerQueue, ClearForgetsEverything) {
  TimerQueue queue;
  int runs = 0;
  TimerQueue::id a = queue.add(t0, [&] { ++runs; });
  queue.add(t0 + 1ms, [&] { ++runs; });
  queue.clear();
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.next().has_value());
  EXPECT_TRUE(queue.take_due(t0 + 1h).empty());
  EXPECT_FALSE(queue.cancel(a));
  EXPECT_EQ(runs, 0);
}

TEST(TimerQueue, IdsAreNotReusedAfterClear) {
  TimerQueue queue;
  TimerQueue::id a = queue.add(t0, [] {});
  queue.clear();
  TimerQueue::id b = queue.add(t0, [] {});
  EXPECT_NE(a, b);
  EXPECT_FALSE(queue.cancel(a));
  EXPECT_TRUE(queue.cancel(b));
}

TEST(TimerQueue, TimerAddedWhileRunningDueOnesWaitsForNextTake) {
  TimerQueue queue;
  std::string order;
  queue.add(t0, [&] {
    order += 'a';
    queue.add(t0, [&] { order += 'b'; });
  });
  run(queue.take_due(t0));
  EXPECT_EQ(order, "a");
  EXPECT_EQ(queue.next(), t0);
  run(queue.take_due(t0));
  EXPECT_EQ(order, "ab");
}

TEST(TimerQueue, ReusedSlotGetsANewIdAndTheOldOneNoLongerCancels) {
  TimerQueue queue;
  TimerQueue::id a = queue.add(t0, [] {});
  EXPECT_TRUE(queue.cancel(a));
  TimerQueue::id b = queue.add(t0, [] {});  // takes the slot `a` had
  EXPECT_NE(a, b);
  EXPECT_FALSE(queue.cancel(a));
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_TRUE(queue.cancel(b));
  EXPECT_EQ(queue.size(), 0u);
}

TEST(TimerQueue, CancelledTimersLeaveNoGapInTheOrder) {
  // Many cancels leave stale heap entries; the live ones keep their order
  // and next() never reports a cancelled deadline.
  TimerQueue queue;
  std::vector<TimerQueue::id> ids;
  std::string order;
  for (int i = 0; i < 500; ++i) {
    ids.push_back(queue.add(t0 + std::chrono::milliseconds(i), [&order, i] { order += std::to_string(i) + ","; }));
  }
  std::string expected;
  for (int i = 0; i < 500; ++i) {
    if (i % 5 == 4) {
      expected += std::to_string(i) + ",";
    } else {
      EXPECT_TRUE(queue.cancel(ids[static_cast<std::size_t>(i)]));
    }
  }
  EXPECT_EQ(queue.size(), 100u);
  EXPECT_EQ(queue.next(), t0 + 4ms);
  run(queue.take_due(t0 + 1h));
  EXPECT_EQ(order, expected);
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.next().has_value());
}

TEST(TimerQueue, CallbackDestroyedWhenCancelledNotWhenItsDeadlineComes) {
  // A cancelled timer's captures go at once (an acquire that was woken must
  // not be kept alive by its old timer until that would have fired).
  TimerQueue queue;
  auto owned = std::make_shared<int>(1);
  std::weak_ptr<int> watch = owned;
  TimerQueue::id timer = queue.add(t0 + 1h, [owned] {});
  owned.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(queue.cancel(timer));
  EXPECT_TRUE(watch.expired());
}

TEST(TimerQueue, MatchesAnOrderedMapUnderRandomAddsCancelsAndTakes) {
  TimerQueue queue;
  std::map<std::pair<clock::time_point, int>, int> model;  // (deadline, added #) -> label
  std::map<int, std::pair<TimerQueue::id, std::pair<clock::time_point, int>>> handles;
  std::vector<int> ran;
  std::mt19937 random(7);
  int added = 0;
  auto now = t0;
  for (int step = 0; step < 20'000; ++step) {
    int what = static_cast<int>(random() % 10);
    if (what < 5) {
      auto when = now + std::chrono::milliseconds(random() % 100);
      int label = added++;
      auto timer = queue.add(when, [&ran, label] { ran.push_back(label); });
      model[{when, label}] = label;
      handles[label] = {timer, {when, label}};
    } else if (what < 8 && !handles.empty()) {
      auto it = handles.begin();
      std::advance(it, static_cast<long>(random() % handles.size()));
      EXPECT_TRUE(queue.cancel(it->second.first));
      model.erase(it->second.second);
      handles.erase(it);
    } else {
      now += std::chrono::milliseconds(random() % 20);
      ran.clear();
      while (auto fn = queue.take_next_due(now)) fn();
      std::vector<int> expected;
      while (!model.empty() && model.begin()->first.first <= now) {
        expected.push_back(model.begin()->second);
        handles.erase(model.begin()->second);
        model.erase(model.begin());
      }
      ASSERT_EQ(ran, expected) << "step " << step;
    }
    ASSERT_EQ(queue.size(), model.size());
    if (model.empty()) {
      ASSERT_FALSE(queue.next().has_value());
    } else {
      ASSERT_EQ(queue.next(), model.begin()->first.first);
    }
  }
}

}  // namespace

namespace warden::detail {
namespace {

TEST(TimerQueueNext, TakesDueTimersOneAtATimeSoACallbackCanCancelTheRest) {
  TimerQueue timers;
  auto t = clock::time_point{} + std::chrono::seconds(1);
  std::vector<int> ran;
  TimerQueue::id second = 0;
  timers.add(t, [&] {
    ran.push_back(1);
    timers.cancel(second);  // due in the same batch, but cancelled first
  });
  second = timers.add(t, [&] { ran.push_back(2); });
  timers.add(t + std::chrono::seconds(1), [&] { ran.push_back(3); });
  while (auto fn = timers.take_next_due(t)) fn();
  EXPECT_EQ(ran, std::vector<int>{1});
  EXPECT_EQ(timers.size(), 1u);
  EXPECT_FALSE(timers.take_next_due(t));
}

}  // namespace
}  // namespace warden::detail
