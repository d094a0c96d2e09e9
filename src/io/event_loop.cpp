#include "io/event_loop.hpp"

#include "io/spin_policy.hpp"

#include <pthread.h>
#include <signal.h>

#include <stdexcept>

namespace warden::detail {

EventLoop::EventLoop() {
  if (uv_loop_init(&loop_) != 0) throw std::runtime_error("warden: uv_loop_init failed");
  wakeup_.data = this;
  uv_async_init(&loop_, &wakeup_, [](uv_async_t* handle) { static_cast<EventLoop*>(handle->data)->drain(); });
  timer_.data = this;
  uv_timer_init(&loop_, &timer_);
  flusher_ = std::make_unique<WriteFlusher>(&loop_);
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
  if (!batch.empty()) flusher_->note_activity();
  for (auto& task : batch) task();
  if (stopping_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&wakeup_))) {
    // The shutdown task ran: close our own handles; uv_run returns once the
    // handles closed by `last_` (connections) have finished closing too.
    timers_.clear();
    uv_timer_stop(&timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
    flusher_->close();
  }
}

void EventLoop::run() {
  thread_id_.store(std::this_thread::get_id());
  // hiredis writes with write(2): to a server that went away that raises
  // SIGPIPE, whose default action ends the process. Blocked in this thread,
  // the signal stays pending here and write(2) reports EPIPE instead. Other
  // threads and the application's own signal handling are left alone.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  for (;;) {
    if (waiting_callers().load(std::memory_order_relaxed) > 1) {
      // Keep polling while replies and tasks keep coming; sleep after a
      // quiet io_spin.
      auto until = clock::now() + io_spin;
      auto seen = flusher_->activity();
      while (waiting_callers().load(std::memory_order_relaxed) > 1) {
        if (uv_run(&loop_, UV_RUN_NOWAIT) == 0) return;
        auto now = clock::now();
        if (flusher_->activity() != seen) {
          seen = flusher_->activity();
          until = now + io_spin;
        } else if (now >= until) {
          break;
        }
      }
    }
    if (uv_run(&loop_, UV_RUN_ONCE) == 0) return;
  }
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
