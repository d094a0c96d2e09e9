// The I/O loop's hand-over between a caller leading it and its own thread,
// without a server: what a task posted meanwhile writes leaves at once.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "io/event_loop.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;

class Flag {
 public:
  void set() {
    std::lock_guard<std::mutex> guard(mutex_);
    set_ = true;
    cv_.notify_all();
  }
  bool is_set() {
    std::lock_guard<std::mutex> guard(mutex_);
    return set_;
  }
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    return cv_.wait_for(guard, timeout, [&] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

// Stands for a connection: what it has to write leaves when the loop flushes.
class Output final : public Flushable {
 public:
  void flush_output() override { written.set(); }
  Flag written;
};

// A caller leads the loop (its thread parked, nothing else in flight), and
// another thread posts a task that queues output meanwhile. The leader hands
// the loop back, the loop thread runs the task outside a libuv turn, and the
// output must leave before the loop thread sleeps again: here it has no
// timer at all, so output left for the next turn would never leave.
TEST(EventLoop, OutputOfATaskPostedWhileACallerLeadsLeavesAtOnce) {
  // Declared first: they outlive the loop, which may still flush them.
  Output output;
  Output again;
  EventLoop loop;
  loop.set_idle_probe([] { return true; });
  bool led = false;
  for (int attempt = 0; attempt < 100 && !led; ++attempt) {
    Flag leading;
    std::thread caller([&] {
      EventLoop::CallerWaits waits;
      loop.post([] {});
      loop.lead_until([&] {
        if (loop.led_here()) leading.set();
        return output.written.is_set();
      });
    });
    // The loop thread parks only once it has seen the probe (set above, from
    // this thread); until it has, the caller's task runs but is not led.
    if (!leading.wait_for(200ms)) {
      loop.post([] {});
      caller.join();
      continue;
    }
    led = true;
    loop.post([&] { loop.schedule_flush(&output); });
    EXPECT_TRUE(output.written.wait_for(5s)) << "the task's output waited for the loop's next turn";
    caller.join();
    // The loop still runs: a task posted now is run and flushed too.
    loop.post([&] { loop.schedule_flush(&again); });
    EXPECT_TRUE(again.written.wait_for(5s));
  }
  ASSERT_TRUE(led) << "no caller ever led the loop";
  loop.stop({});
}

// A burst of calls is a burst of posted tasks. Run back to back, ten
// thousand of them kept the loop from its sockets and timers for as long as
// they took (a server, its window of commands answered, sat idle); the loop
// runs them a bounded batch at a time, with a turn of its own between.
TEST(EventLoop, ATimerDueRunsBetweenBatchesOfPostedTasks) {
  EventLoop loop;
  constexpr int tasks = 10'000;
  Flag go;
  Flag all_ran;
  // Touched on the loop thread only.
  int ran = 0;
  int ran_before_timer = -1;
  // Holds the loop thread until every task below is queued behind it.
  loop.post([&] { go.wait_for(5s); });
  loop.post([&] { loop.after(0ms, [&] { ran_before_timer = ran; }); });
  for (int i = 0; i < tasks; ++i) {
    loop.post([&] {
      if (++ran == tasks) all_ran.set();
    });
  }
  go.set();
  ASSERT_TRUE(all_ran.wait_for(10s));
  Flag read;
  int seen = -1;
  loop.post([&] {
    seen = ran_before_timer;
    read.set();
  });
  ASSERT_TRUE(read.wait_for(5s));
  EXPECT_GE(seen, 0) << "the timer never ran";
  EXPECT_LT(seen, tasks / 2) << "the timer due at once waited for the whole burst of tasks";
  loop.stop({});
}

}  // namespace
}  // namespace warden::detail
