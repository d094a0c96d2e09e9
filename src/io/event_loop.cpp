#include "io/event_loop.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <stdexcept>

namespace warden::detail {

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
  thread_id_.store(thread_.get_id());
}

EventLoop::~EventLoop() {
  if (thread_.joinable()) stop({});
}

bool EventLoop::post(std::function<void()> task) {
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
  thread_id_.store(std::this_thread::get_id());
  // Writing to a server that went away raises SIGPIPE, whose default action
  // ends the process. Blocked in this thread, the signal stays pending here
  // and write(2) reports EPIPE instead. Other threads and the application's
  // own signal handling are left alone.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  // The loop sleeps in epoll whenever it has nothing to do: callers hand it
  // work through post() (one eventfd write, coalesced by libuv while a
  // wake-up is pending) and it answers through their promises.
  uv_run(&loop_, UV_RUN_DEFAULT);
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
