// The I/O thread: one libuv loop that owns every connection and timer.
#pragma once

#include <uv.h>

#include <atomic>
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
  bool post(std::function<void()> task);

  bool in_loop_thread() const { return std::this_thread::get_id() == thread_id_.load(); }

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

  // Runs `last` on the loop thread (after every task already posted), refuses
  // new tasks, drops pending timers, lets libuv close every handle that `last`
  // closed, and joins the thread. Called once, from a thread other than the loop's.
  void stop(std::function<void()> last);

 private:
  void run();
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
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
  bool accepting_ = true;
  bool stopping_ = false;
  std::function<void()> last_;
  std::thread thread_;
  std::atomic<std::thread::id> thread_id_{};
};

}  // namespace warden::detail
