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

// Runs every timer due at `now`, earliest first, as the event loop does;
// returns how many ran.
std::size_t run_due(TimerQueue& queue, clock::time_point now) {
  std::size_t ran = 0;
  while (auto fn = queue.take_next_due(now)) {
    fn();
    ++ran;
  }
  return ran;
}

using Model = std::map<std::pair<clock::time_point, int>, int>;  // (deadline, order added) -> label

// The queue holds as many timers as the model, and the same one comes next.
void expect_same_next(const TimerQueue& queue, const Model& model) {
  ASSERT_EQ(queue.size(), model.size());
  if (model.empty()) {
    ASSERT_FALSE(queue.next().has_value());
  } else {
    ASSERT_EQ(queue.next(), model.begin()->first.first);
  }
}

TEST(TimerQueue, StartsEmpty) {
  TimerQueue queue;
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.next().has_value());
  EXPECT_FALSE(queue.take_next_due(t0 + 24h));
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
  run_due(queue, t0 + 30ms);
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
  run_due(queue, t0);
  EXPECT_EQ(order, "01234");
}

TEST(TimerQueue, TakeDueLeavesFutureTimers) {
  TimerQueue queue;
  std::string order;
  queue.add(t0 + 10ms, [&] { order += 'a'; });
  queue.add(t0 + 20ms, [&] { order += 'b'; });
  queue.add(t0 + 30ms, [&] { order += 'c'; });

  EXPECT_FALSE(queue.take_next_due(t0 + 9ms));
  EXPECT_EQ(queue.size(), 3u);

  run_due(queue, t0 + 20ms);  // a deadline equal to now is due
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.next(), t0 + 30ms);

  run_due(queue, t0 + 29ms);
  EXPECT_EQ(order, "ab");
  run_due(queue, t0 + 1h);
  EXPECT_EQ(order, "abc");
  EXPECT_FALSE(queue.next().has_value());
}

TEST(TimerQueue, TakeDueDoesNotRunCallbacks) {
  TimerQueue queue;
  int runs = 0;
  queue.add(t0, [&] { ++runs; });
  auto due = queue.take_next_due(t0);
  ASSERT_TRUE(due);
  EXPECT_EQ(runs, 0);
  due();
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(queue.take_next_due(t0));
}

TEST(TimerQueue, CancelRemovesTimer) {
  TimerQueue queue;
  std::string order;
  queue.add(t0 + 1ms, [&] { order += 'a'; });
  TimerQueue::id b = queue.add(t0 + 2ms, [&] { order += 'b'; });
  queue.add(t0 + 3ms, [&] { order += 'c'; });
  EXPECT_TRUE(queue.cancel(b));
  EXPECT_EQ(queue.size(), 2u);
  run_due(queue, t0 + 1s);
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
  run_due(queue, t0);
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
  EXPECT_EQ(run_due(queue, t0), 1u);
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
  EXPECT_EQ(run_due(queue, t0 + 1h), 0u);
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

TEST(TimerQueue, TimerAddedWhileRunningDueOnesIsTakenNextWhenDue) {
  TimerQueue queue;
  std::string order;
  queue.add(t0, [&] {
    order += 'a';
    queue.add(t0, [&] { order += 'b'; });
    queue.add(t0 + 1ms, [&] { order += 'c'; });
  });
  auto first = queue.take_next_due(t0);
  ASSERT_TRUE(first);
  first();
  EXPECT_EQ(order, "a");
  EXPECT_EQ(queue.next(), t0);
  run_due(queue, t0);
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(queue.next(), t0 + 1ms);
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
  run_due(queue, t0 + 1h);
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
  Model model;
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
    expect_same_next(queue, model);
  }
}

// An intrusive timer that notes its label in `log` when it runs.
class Noting final : public warden::detail::Timer {
 public:
  Noting(std::string& log, char label) : log_(log), label_(label) {}
  ~Noting() override = default;
  std::function<void()> then;  // runs after the note, if set

 private:
  void on_timer() override {
    log_ += label_;
    if (then) then();
  }
  std::string& log_;
  char label_;
};

TEST(TimerQueueIntrusive, RunsInDeadlineOrderAlongsideCallbacks) {
  TimerQueue queue;
  std::string order;
  Noting a(order, 'a'), c(order, 'c');
  queue.schedule(c, t0 + 30ms);
  queue.add(t0 + 20ms, [&] { order += 'b'; });
  queue.schedule(a, t0 + 10ms);
  EXPECT_TRUE(a.scheduled());
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.next(), t0 + 10ms);
  EXPECT_EQ(run_due(queue, t0 + 30ms), 3u);
  EXPECT_EQ(order, "abc");
  EXPECT_FALSE(a.scheduled());
  EXPECT_FALSE(c.scheduled());
  EXPECT_EQ(queue.size(), 0u);
}

TEST(TimerQueueIntrusive, TiesRunInTheOrderScheduledWhateverTheKind) {
  TimerQueue queue;
  std::string order;
  Noting one(order, '1'), three(order, '3');
  queue.schedule(one, t0);
  queue.add(t0, [&] { order += '2'; });
  queue.schedule(three, t0);
  queue.add(t0, [&] { order += '4'; });
  run_due(queue, t0);
  EXPECT_EQ(order, "1234");
}

TEST(TimerQueueIntrusive, RescheduleMovesItAndGoesBehindTies) {
  TimerQueue queue;
  std::string order;
  Noting a(order, 'a'), b(order, 'b');
  queue.schedule(a, t0 + 1ms);
  queue.schedule(b, t0 + 5ms);
  queue.schedule(a, t0 + 5ms);  // now due with b, and after it
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.next(), t0 + 5ms);
  run_due(queue, t0 + 5ms);
  EXPECT_EQ(order, "ba");
  queue.schedule(a, t0 + 9ms);
  queue.schedule(a, t0 + 7ms);  // earlier
  EXPECT_EQ(queue.next(), t0 + 7ms);
  run_due(queue, t0 + 7ms);
  EXPECT_EQ(order, "baa");
}

TEST(TimerQueueIntrusive, CancelTakesItOffOnce) {
  TimerQueue queue;
  std::string order;
  Noting a(order, 'a'), b(order, 'b');
  EXPECT_FALSE(queue.cancel(a));  // never scheduled
  queue.schedule(a, t0);
  queue.schedule(b, t0 + 1ms);
  EXPECT_TRUE(queue.cancel(a));
  EXPECT_FALSE(a.scheduled());
  EXPECT_FALSE(queue.cancel(a));
  EXPECT_EQ(queue.next(), t0 + 1ms);
  run_due(queue, t0 + 1h);
  EXPECT_EQ(order, "b");
  EXPECT_FALSE(queue.cancel(b));  // already ran
}

TEST(TimerQueueIntrusive, ATimerMayScheduleItselfAgainWhenItRuns) {
  TimerQueue queue;
  std::string order;
  Noting a(order, 'a');
  int left = 3;
  a.then = [&] {
    if (--left > 0) queue.schedule(a, t0 + std::chrono::milliseconds(left));
  };
  queue.schedule(a, t0);
  run_due(queue, t0 + 1h);
  EXPECT_EQ(order, "aaa");
  EXPECT_FALSE(a.scheduled());
}

TEST(TimerQueueIntrusive, ACallbackMayCancelAnIntrusiveTimerDueInTheSameBatch) {
  TimerQueue queue;
  std::string order;
  auto b = std::make_unique<Noting>(order, 'b');
  queue.add(t0, [&] {
    order += 'a';
    queue.cancel(*b);
    b.reset();  // its owner goes: nothing of it is left in the queue
  });
  queue.schedule(*b, t0);
  EXPECT_EQ(run_due(queue, t0), 1u);
  EXPECT_EQ(order, "a");
  EXPECT_EQ(queue.size(), 0u);
}

TEST(TimerQueueIntrusive, ClearUnschedulesWithoutRunning) {
  TimerQueue queue;
  std::string order;
  Noting a(order, 'a');
  queue.schedule(a, t0);
  queue.add(t0, [&] { order += 'b'; });
  queue.clear();
  EXPECT_FALSE(a.scheduled());
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_EQ(run_due(queue, t0 + 1h), 0u);
  EXPECT_EQ(order, "");
  queue.schedule(a, t0);  // usable again
  run_due(queue, t0);
  EXPECT_EQ(order, "a");
}

TEST(TimerQueueIntrusive, MatchesAnOrderedMapUnderRandomSchedulesCancelsAndRuns) {
  // Intrusive timers and callbacks mixed, with rescheduling: the order they
  // run in is the model's, (deadline, scheduled #).
  TimerQueue queue;
  constexpr int timers = 64;
  std::string unused;
  std::vector<std::unique_ptr<Noting>> owned;
  std::vector<int> ran;
  for (int i = 0; i < timers; ++i) {
    owned.push_back(std::make_unique<Noting>(unused, 'x'));
    owned.back()->then = [&ran, i] { ran.push_back(i); };
  }
  Model model;
  std::map<int, std::pair<clock::time_point, int>> where;  // label -> its model key
  std::map<int, TimerQueue::id> callback_ids;              // labels >= timers are callbacks
  std::mt19937 random(11);
  int scheduled = 0;
  int next_callback = timers;
  auto now = t0;
  auto forget = [&](int label) {
    model.erase(where[label]);
    where.erase(label);
    callback_ids.erase(label);
  };
  for (int step = 0; step < 20'000; ++step) {
    int what = static_cast<int>(random() % 10);
    auto when = now + std::chrono::milliseconds(random() % 100);
    if (what < 4) {
      int label = static_cast<int>(random() % timers);
      if (where.count(label) != 0) forget(label);
      queue.schedule(*owned[static_cast<std::size_t>(label)], when);
      where[label] = {when, scheduled};
      model[{when, scheduled++}] = label;
    } else if (what < 6) {
      int label = next_callback++;
      callback_ids[label] = queue.add(when, [&ran, label] { ran.push_back(label); });
      where[label] = {when, scheduled};
      model[{when, scheduled++}] = label;
    } else if (what < 8 && !where.empty()) {
      auto it = where.begin();
      std::advance(it, static_cast<long>(random() % where.size()));
      int label = it->first;
      if (label < timers) {
        EXPECT_TRUE(queue.cancel(*owned[static_cast<std::size_t>(label)]));
      } else {
        EXPECT_TRUE(queue.cancel(callback_ids[label]));
      }
      forget(label);
    } else {
      now += std::chrono::milliseconds(random() % 20);
      ran.clear();
      run_due(queue, now);
      std::vector<int> expected;
      while (!model.empty() && model.begin()->first.first <= now) {
        int label = model.begin()->second;
        expected.push_back(label);
        forget(label);
      }
      ASSERT_EQ(ran, expected) << "step " << step;
    }
    expect_same_next(queue, model);
  }
  queue.clear();
}

TEST(TimerQueueIntrusive, ACrowdGoneLeavesTheQueueReusable) {
  // 10,000 timers scheduled then cancelled (the heap gives its storage
  // back); the queue keeps working with what is left.
  TimerQueue queue;
  std::string order;
  std::vector<std::unique_ptr<Noting>> crowd;
  for (int i = 0; i < 10'000; ++i) {
    crowd.push_back(std::make_unique<Noting>(order, 'x'));
    queue.schedule(*crowd.back(), t0 + std::chrono::milliseconds(i));
  }
  Noting last(order, 'z');
  queue.schedule(last, t0 + 1h);
  for (auto& timer : crowd) EXPECT_TRUE(queue.cancel(*timer));
  crowd.clear();
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.next(), t0 + 1h);
  run_due(queue, t0 + 1h);
  EXPECT_EQ(order, "z");
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
