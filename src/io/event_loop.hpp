// The I/O thread: one libuv loop that owns every connection and timer.
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstdint>
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
  // a promise, so no user callback can run from a task run in place. Leaving
  // the outermost one settles a wait left unled (see lead_until).
  class CallerWaits {
   public:
    CallerWaits() { ++depth_; }
    ~CallerWaits();
    CallerWaits(const CallerWaits&) = delete;
    CallerWaits& operator=(const CallerWaits&) = delete;

   private:
    friend class EventLoop;
    static thread_local int depth_;
  };

  // Called inside the CallerWaits scope of a task just run in place, by the
  // thread that waits for its outcome: waits until `done()` is true or the
  // loop thread is needed, whichever comes first (the caller then waits on
  // its promise as usual).
  //
  // A lone blocking caller need not wake the loop thread at all. When the
  // loop had nothing else to watch (no command in flight, no subscription,
  // no acquire waiting: see set_idle_probe), the loop thread sleeps parked
  // (watching the sockets for hang-ups only), and the caller that sent
  // the only command waits for its reply on the sockets itself, running the
  // loop as the loop thread would. One thread sleeps and wakes per command,
  // as with a plain blocking client. Timers, tasks posted by other threads
  // and anything else are left to the loop thread: the caller hands the
  // loop back as soon as one of them needs running, so no callback but its
  // own operation's runs on its thread.
  void lead_until(const std::function<bool()>& done);

  // Loop thread, before anything runs: tells whether the client has nothing
  // in flight that the sockets could answer (so the loop thread may stop
  // watching them). Unset: never idle, the loop thread always watches.
  void set_idle_probe(std::function<bool()> probe);
  // Under the loop: libuv is about to write(2) on this thread. A user
  // thread blocks SIGPIPE until its blocking call ends (the loop thread
  // blocks it for good).
  void shield_pipe_signal();
  // Loop thread: a connected socket, watched while the loop thread is parked
  // for the server closing it (EPOLLRDHUP), so a lost connection is noticed
  // and re-made at once even when nothing is in flight. Unwatched before
  // it is closed. `input`: any input wakes it too (a connection whose
  // server speaks unasked: ConnectionOptions::input_wakes_parked).
  void watch_hangup(int fd, bool input = false);
  void unwatch_hangup(int fd);

  // True on the loop thread, and on a user thread while it runs a task in place.
  bool in_loop_thread() const { return running_ == this; }
  // True on a user thread running the loop in lead_until: what would call a
  // user's callback from here posts it to the loop thread instead.
  bool led_here() const { return running_ == this && leading_; }

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
  // `parked`: the loop thread slept off the sockets (and was not yet
  // woken); `quiet`: and nothing but this thread's own work is in flight.
  bool run_in_place(std::function<void()>& task, bool& quiet, bool& parked);
  bool idle() const { return idle_probe_ && idle_probe_(); }
  bool timer_before_wake_up();
  // lead_until's end, run_mutex_ still held: the loop thread takes over
  // whatever the caller leaves.
  void hand_back();
  // Wakes the loop thread if it sleeps parked; signal_parked() with mutex_ held.
  void unpark();
  void signal_parked();
  void clear_signal();
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
  // Counts runs of the loop's callbacks (under run_mutex_). idle_at_ is the
  // count when the idle probe last said yes: nothing ran since, so nothing
  // was sent since either.
  std::uint64_t generation_ = 0;
  std::uint64_t idle_at_ = ~std::uint64_t{0};
  std::function<bool()> idle_probe_;
  // A caller runs the loop (lead_until): timers and tasks that fall due meanwhile
  // are left for the loop thread (deferred_timers_, tasks_).
  bool leading_ = false;
  bool deferred_timers_ = false;
  // A task run in place that may be led: this thread's, on this loop, at this generation.
  struct Unled {
    EventLoop* loop = nullptr;
    std::uint64_t generation = 0;
  };
  static thread_local Unled unled_;
  // Order: run_mutex_ before mutex_.
  std::mutex mutex_;
  // The loop thread sleeps parked in epoll on park_fd_: unpark_fd_ (an
  // eventfd, written by signal_parked) and the connections' sockets for
  // hang-ups only (watch_hangup), never for their answers.
  int park_fd_ = -1;
  int unpark_fd_ = -1;
  // Under mutex_: the loop thread sleeps parked (not on the sockets' answers);
  // a caller leads; the loop thread asked for the loop back; a wake-up for
  // the parked loop thread is pending.
  bool parked_ = false;
  bool leader_ = false;
  bool loop_wanted_ = false;
  bool unpark_ = false;
  std::deque<std::function<void()>> tasks_;
  bool accepting_ = true;
  bool stopping_ = false;
  std::function<void()> last_;
  std::thread thread_;
  static thread_local const EventLoop* running_;
};

}  // namespace warden::detail
