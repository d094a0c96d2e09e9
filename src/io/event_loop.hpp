// The I/O thread: one libuv loop that owns every connection and timer.
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/timer_queue.hpp"

namespace warden::detail {

// Something with output to write at the end of the loop turn (a connection):
// every command queued during one turn leaves in one write.
class Flushable {
 public:
  virtual void flush_output() = 0;

 protected:
  ~Flushable() = default;

 private:
  friend class EventLoop;
  bool flush_scheduled_ = false;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();  // stop()s if not stopped yet
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Queues `task` for the loop thread. Returns false (and drops the task) once
  // the loop is stopping; the caller then fails its operation itself.
  //
  // Inside a CallerWaits scope, when the loop thread is asleep and nothing is
  // queued before it, the task runs at once on the calling thread instead
  // (holding the loop, as the loop thread would): this saves waking the loop
  // thread, which on a lightly used client costs more than the task itself.
  bool post(std::function<void()> task);

  // Marks a stretch of a user thread that only waits for its outcome through
  // a promise, so no user callback can run from a task run in place.
  class CallerWaits {
   public:
    CallerWaits() { ++depth_; }
    ~CallerWaits() { --depth_; }
    CallerWaits(const CallerWaits&) = delete;
    CallerWaits& operator=(const CallerWaits&) = delete;

   private:
    friend class EventLoop;
    static thread_local int depth_;
  };

  // True on the loop thread, and on a user thread while it runs a task in place.
  bool in_loop_thread() const { return running_ == this; }

  // Loop thread only.
  uv_loop_t* uv() { return &loop_; }
  // Runs target->flush_output() once at the end of this loop turn: after the
  // I/O callbacks and tasks of the turn, before the loop blocks again.
  void schedule_flush(Flushable* target);
  // Forgets a scheduled flush (the target is going away).
  void cancel_flush(Flushable* target);
  TimerQueue::id at(clock::time_point when, std::function<void()> fn);
  TimerQueue::id after(std::chrono::milliseconds delay, std::function<void()> fn);
  void cancel(TimerQueue::id timer);
  // An intrusive timer (see Timer): scheduled for `when` (moved if it was
  // scheduled), or taken off.
  void schedule(Timer& timer, clock::time_point when);
  void cancel(Timer& timer);

  // Runs `last` on the loop thread (after every task already posted), refuses
  // new tasks, drops pending timers, lets libuv close every handle that `last`
  // closed, and joins the thread. Called once, from a thread other than the loop's.
  void stop(std::function<void()> last);

 private:
  void run();
  bool run_in_place(std::function<void()>& task);
  bool interest_pending() const;
  bool loop_needs_waking();
  void wake_loop();
  void drain();
  void rearm();
  void run_flushes();

  uv_loop_t loop_{};
  uv_async_t wakeup_{};
  uv_timer_t timer_{};
  TimerQueue timers_;
  // Before the loop blocks (output of timers) and after I/O (output of
  // replies' handlers and of tasks).
  uv_prepare_t prepare_{};
  uv_check_t check_{};
  std::vector<Flushable*> flushes_;
  // Held by whichever thread runs the loop's callbacks: the loop thread while
  // it handles events (never while it sleeps), or a user thread running a
  // task in place. Every libuv and connection state is touched only under it.
  std::mutex run_mutex_;
  // When the sleeping loop thread wakes by itself (libuv's clock, ms; -1:
  // never); read under run_mutex_ by a task run in place that set a timer.
  std::int64_t sleeps_until_ = -1;
  // Order: run_mutex_ before mutex_.
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
  bool accepting_ = true;
  bool stopping_ = false;
  std::function<void()> last_;
  std::thread thread_;
  static thread_local const EventLoop* running_;
};

}  // namespace warden::detail
