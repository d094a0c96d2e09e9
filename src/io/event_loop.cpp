#include "io/event_loop.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>


#include <algorithm>
#include <stdexcept>

namespace warden::detail {

thread_local int EventLoop::CallerWaits::depth_ = 0;
thread_local const EventLoop* EventLoop::running_ = nullptr;

EventLoop::EventLoop() {
  if (uv_loop_init(&loop_) != 0) throw std::runtime_error("warden: uv_loop_init failed");
  wakeup_.data = this;
  uv_async_init(&loop_, &wakeup_, [](uv_async_t* handle) { static_cast<EventLoop*>(handle->data)->drain(); });
  timer_.data = this;
  uv_timer_init(&loop_, &timer_);
  prepare_.data = this;
  check_.data = this;
  uv_prepare_init(&loop_, &prepare_);
  uv_check_init(&loop_, &check_);
  uv_prepare_start(&prepare_, [](uv_prepare_t* handle) { static_cast<EventLoop*>(handle->data)->run_flushes(); });
  uv_check_start(&check_, [](uv_check_t* handle) { static_cast<EventLoop*>(handle->data)->run_flushes(); });
  // The flush handles alone never keep the loop alive.
  uv_unref(reinterpret_cast<uv_handle_t*>(&prepare_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&check_));
  thread_ = std::thread([this] { run(); });
}

EventLoop::~EventLoop() {
  if (thread_.joinable()) stop({});
}

bool EventLoop::post(std::function<void()> task) {
  // Not from a thread already running a loop: the loop thread itself (the
  // mutex is its own), or a user thread already running a task in place.
  if (CallerWaits::depth_ > 0 && running_ == nullptr && run_mutex_.try_lock()) {
    bool ran = false;
    bool wake = false;
    try {
      ran = run_in_place(task);
      wake = ran && loop_needs_waking();
    } catch (...) {
      // Let go of the loop, and let its thread write whatever was queued.
      running_ = nullptr;
      run_mutex_.unlock();
      wake_loop();
      throw;
    }
    running_ = nullptr;
    run_mutex_.unlock();
    if (wake) wake_loop();
    if (ran) return true;
  }
  // Sending under the mutex: once stop() has queued the shutdown task nobody
  // sends any more, so the handle is never signalled after it was closed.
  std::lock_guard<std::mutex> guard(mutex_);
  if (!accepting_) return false;
  tasks_.push_back(std::move(task));
  uv_async_send(&wakeup_);
  return true;
}

TimerQueue::id EventLoop::at(clock::time_point when, std::function<void()> fn) {
  auto timer = timers_.add(when, std::move(fn));
  rearm();
  return timer;
}

TimerQueue::id EventLoop::after(std::chrono::milliseconds delay, std::function<void()> fn) {
  return at(clock::now() + delay, std::move(fn));
}

void EventLoop::cancel(TimerQueue::id timer) {
  if (timer != 0) timers_.cancel(timer);
}

void EventLoop::schedule(Timer& timer, clock::time_point when) {
  timers_.schedule(timer, when);
  rearm();
}

void EventLoop::cancel(Timer& timer) { timers_.cancel(timer); }

void EventLoop::schedule_flush(Flushable* target) {
  if (target->flush_scheduled_) return;
  target->flush_scheduled_ = true;
  flushes_.push_back(target);
}

void EventLoop::cancel_flush(Flushable* target) {
  if (!target->flush_scheduled_) return;
  target->flush_scheduled_ = false;
  flushes_.erase(std::remove(flushes_.begin(), flushes_.end(), target), flushes_.end());
}

void EventLoop::run_flushes() {
  // A flush may schedule another (a write that completed at once and found
  // more output): loop until nothing is left.
  while (!flushes_.empty()) {
    std::vector<Flushable*> batch;
    batch.swap(flushes_);
    for (auto* target : batch) target->flush_scheduled_ = false;
    for (auto* target : batch) target->flush_output();
  }
}

void EventLoop::rearm() {
  if (stopping_) return;
  auto next = timers_.next();
  if (!next) {
    uv_timer_stop(&timer_);
    return;
  }
  auto now = clock::now();
  auto delay = *next <= now ? std::chrono::milliseconds{0} : std::chrono::ceil<std::chrono::milliseconds>(*next - now);
  uv_timer_start(
      &timer_,
      [](uv_timer_t* handle) {
        auto* self = static_cast<EventLoop*>(handle->data);
        auto now = clock::now();
        while (auto fn = self->timers_.take_next_due(now)) fn();
        self->rearm();
      },
      static_cast<std::uint64_t>(delay.count()), 0);
}

void EventLoop::wake_loop() {
  std::lock_guard<std::mutex> guard(mutex_);
  // Once stopping, stop() itself has woken the loop (and may have closed the handle).
  if (accepting_) uv_async_send(&wakeup_);
}

bool EventLoop::run_in_place(std::function<void()>& task) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    // A task queued earlier (by this thread too) runs first, on the loop thread.
    if (!accepting_ || !tasks_.empty()) return false;
  }
  running_ = this;
  task();
  // The loop thread's prepare/check handles would write this turn's output.
  run_flushes();
  return true;
}

bool EventLoop::interest_pending() const {
  // libuv hands new or changed socket interest to epoll only from inside
  // uv_run (its watcher queue, empty when it points at itself), so a thread
  // sleeping on the epoll descriptor would not see it.
  void* const* watchers = loop_.watcher_queue;
  return watchers[0] != static_cast<const void*>(&loop_.watcher_queue);
}

bool EventLoop::loop_needs_waking() {
  if (interest_pending()) return true;
  uv_update_time(&loop_);
  int timeout = uv_backend_timeout(&loop_);
  if (timeout == 0) return true;  // callbacks pending, handles closing
  if (timeout < 0) return false;
  // A timer set here that falls due before the loop thread would wake.
  auto due = static_cast<std::int64_t>(uv_now(&loop_)) + timeout;
  return sleeps_until_ < 0 || due < sleeps_until_;
}

void EventLoop::drain() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    batch.swap(tasks_);
  }
  for (auto& task : batch) task();
  if (stopping_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&wakeup_))) {
    // The shutdown task ran: close our own handles; uv_run returns once the
    // handles closed by `last_` (connections) have finished closing too.
    timers_.clear();
    uv_timer_stop(&timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
    run_flushes();
    uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
  }
}

void EventLoop::run() {
  // Writing to a server that went away raises SIGPIPE, whose default action
  // ends the process. Blocked in this thread, the signal stays pending here
  // and write(2) reports EPIPE instead. Other threads and the application's
  // own signal handling are left alone.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  running_ = this;
  // The loop handles what is ready holding run_mutex_, then sleeps outside it
  // in poll(2) on libuv's epoll descriptor until an event or its next timer.
  // Callers hand it work through post() (one eventfd write, coalesced by
  // libuv while a wake-up is pending), or run their task themselves while it
  // sleeps; it answers through their promises.
  for (;;) {
    int timeout = 0;
    {
      std::lock_guard<std::mutex> guard(run_mutex_);
      if (uv_run(&loop_, UV_RUN_NOWAIT) == 0) break;  // every handle closed: stopped
      if (!interest_pending()) timeout = uv_backend_timeout(&loop_);
      sleeps_until_ = timeout < 0 ? -1 : static_cast<std::int64_t>(uv_now(&loop_)) + timeout;
    }
    if (timeout == 0) continue;
    pollfd backend{uv_backend_fd(&loop_), POLLIN, 0};
    ::poll(&backend, 1, timeout);  // whatever woke it (EINTR too), the next turn looks
  }
  running_ = nullptr;
}

void EventLoop::stop(std::function<void()> last) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    accepting_ = false;
    tasks_.push_back([this, last = std::move(last)] {
      if (last) last();
      // Anything queued by `last` itself still runs in this drain.
      std::lock_guard<std::mutex> inner(mutex_);
      stopping_ = true;
    });
    uv_async_send(&wakeup_);
  }
  thread_.join();
  uv_loop_close(&loop_);
}

}  // namespace warden::detail
