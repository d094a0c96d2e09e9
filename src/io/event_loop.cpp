#include "io/event_loop.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "io/pipe_signal.hpp"

namespace warden::detail {

namespace {

thread_local PipeSignalShield pipe_signal;

}  // namespace

thread_local int EventLoop::CallerWaits::depth_ = 0;
thread_local const EventLoop* EventLoop::running_ = nullptr;
thread_local EventLoop::Unled EventLoop::unled_;

EventLoop::EventLoop() {
  if (uv_loop_init(&loop_) != 0) throw std::runtime_error("warden: uv_loop_init failed");
  park_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  unpark_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (park_fd_ < 0 || unpark_fd_ < 0) {
    if (park_fd_ >= 0) ::close(park_fd_);
    if (unpark_fd_ >= 0) ::close(unpark_fd_);
    uv_loop_close(&loop_);
    throw std::runtime_error("warden: cannot make the I/O thread's parking descriptors");
  }
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.fd = unpark_fd_;
  ::epoll_ctl(park_fd_, EPOLL_CTL_ADD, unpark_fd_, &wake);
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

EventLoop::CallerWaits::~CallerWaits() {
  if (--depth_ > 0) return;
  pipe_signal.lift();
  if (unled_.loop == nullptr) return;
  // A task ran in place for a wait nobody led: let the loop thread watch for
  // its answer.
  EventLoop* loop = unled_.loop;
  unled_ = {};
  loop->unpark();
}

bool EventLoop::post(std::function<void()> task) {
  // Not from a thread already running a loop: the loop thread itself (the
  // mutex is its own), or a user thread already running a task in place.
  if (CallerWaits::depth_ > 0 && running_ == nullptr && run_mutex_.try_lock()) {
    bool ran = false;
    bool quiet = false;
    bool parked = false;
    bool wake = false;
    try {
      ran = run_in_place(task, quiet, parked);
      // Sleeping off the sockets, the loop thread would not see this task's
      // answer unless this thread waits for it itself (quiet).
      wake = ran && !quiet && (parked || loop_needs_waking());
    } catch (...) {
      // Let go of the loop, and let its thread write whatever was queued.
      running_ = nullptr;
      run_mutex_.unlock();
      wake_loop();
      throw;
    }
    running_ = nullptr;
    // The loop thread sleeps without watching the sockets, and what this
    // task sent is all there is to watch: this thread may wait for the
    // answer itself (lead_until) rather than wake the loop thread for it.
    if (quiet) unled_ = {this, generation_};
    run_mutex_.unlock();
    if (wake) wake_loop();
    if (ran) return true;
  }
  // Sending under the mutex: once stop() has queued the shutdown task nobody
  // sends any more, so the handle is never signalled after it was closed.
  std::lock_guard<std::mutex> guard(mutex_);
  if (!accepting_) return false;
  tasks_.push_back(std::move(task));
  // Wakes the loop thread from the sockets, or a caller leading the loop
  // (which then hands it back).
  uv_async_send(&wakeup_);
  if (parked_ && !leader_) {
    signal_parked();
  }
  return true;
}

void EventLoop::signal_parked() {
  if (unpark_) return;
  unpark_ = true;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(unpark_fd_, &one, sizeof one);
}

void EventLoop::clear_signal() {
  if (!unpark_) return;
  unpark_ = false;
  std::uint64_t count = 0;
  [[maybe_unused]] auto n = ::read(unpark_fd_, &count, sizeof count);
}

void EventLoop::watch_hangup(int fd, bool input) {
  epoll_event event{};
  // EPOLLHUP and EPOLLERR are always reported. Level-triggered input: the
  // loop thread reads it all in the turn it wakes for (no socket is ever
  // left unread), so it parks again on an empty socket.
  event.events = EPOLLRDHUP | (input ? EPOLLIN : 0u);
  event.data.fd = fd;
  ::epoll_ctl(park_fd_, EPOLL_CTL_ADD, fd, &event);
}

void EventLoop::unwatch_hangup(int fd) { ::epoll_ctl(park_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::shield_pipe_signal() {
  if (CallerWaits::depth_ > 0) pipe_signal.raise_shield();
}

void EventLoop::set_idle_probe(std::function<bool()> probe) {
  std::lock_guard<std::mutex> guard(run_mutex_);
  idle_probe_ = std::move(probe);
}

void EventLoop::unpark() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (parked_ && !leader_) {
    signal_parked();
  }
}

void EventLoop::lead_until(const std::function<bool()>& done) {
  if (unled_.loop != this) return;
  auto generation = unled_.generation;
  unled_ = {};
  // Never waits for the loop: a loop thread holding it is awake and reads
  // the answer itself, and waiting here would order the loop's mutex after
  // whatever mutexes the caller holds (which callbacks may take).
  std::unique_lock<std::mutex> run(run_mutex_, std::try_to_lock);
  bool lead = false;
  if (run.owns_lock()) {
    std::lock_guard<std::mutex> guard(mutex_);
    // Nothing ran since this thread's task (so all in flight is its own),
    // the loop thread still sleeps off the sockets, and nobody asked for it.
    lead = generation == generation_ && parked_ && !leader_ && !unpark_ && accepting_ && tasks_.empty();
    if (lead) leader_ = true;
  }
  if (!lead) {
    if (run.owns_lock()) run.unlock();
    unpark();
    return;
  }
  running_ = this;
  leading_ = true;
  try {
    // libuv's clock stood still while the loop thread was parked: deadlines
    // set from here must count from now.
    uv_update_time(&loop_);
    while (!done()) {
      // Blocks in epoll until a socket answers, a timer falls due (left to
      // the loop thread: deferred_timers_) or another thread posts (wakeup_).
      uv_run(&loop_, UV_RUN_ONCE);
      ++generation_;
      if (done() || deferred_timers_) break;
      std::lock_guard<std::mutex> guard(mutex_);
      if (loop_wanted_ || !tasks_.empty() || !accepting_) break;
    }
  } catch (...) {
    // Whatever a callback threw, the loop goes back to its thread.
    hand_back();
    throw;
  }
  hand_back();
}

void EventLoop::hand_back() {
  leading_ = false;
  running_ = nullptr;
  bool idle_now = idle();
  if (idle_now) idle_at_ = generation_;
  bool needed = !idle_now || deferred_timers_ || interest_pending() || timer_before_wake_up();
  std::lock_guard<std::mutex> guard(mutex_);
  leader_ = false;
  needed = needed || loop_wanted_ || !tasks_.empty() || !accepting_;
  loop_wanted_ = false;
  if (needed && parked_) {
    signal_parked();
  }
  // run_mutex_ is the caller's unique_lock, released as lead_until returns.
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
        if (self->leading_) {
          // Timers run on the loop thread only: what they start (renewals,
          // waits running out) may end in a user's callback.
          // uv_run must not then block in epoll for want of a timer.
          self->deferred_timers_ = true;
          uv_stop(self->uv());
          return;
        }
        auto now = clock::now();
        while (auto fn = self->timers_.take_next_due(now)) fn();
        self->rearm();
      },
      static_cast<std::uint64_t>(delay.count()), 0);
}

void EventLoop::wake_loop() {
  std::lock_guard<std::mutex> guard(mutex_);
  // Once stopping, stop() itself has woken the loop (and may have closed the handle).
  if (!accepting_) return;
  if (parked_) {
    signal_parked();
  } else {
    uv_async_send(&wakeup_);
  }
}

bool EventLoop::run_in_place(std::function<void()>& task, bool& quiet, bool& parked) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    // A task queued earlier (by this thread too) runs first, on the loop thread.
    if (!accepting_ || !tasks_.empty()) return false;
    parked = parked_ && !unpark_;
  }
  // Nothing in flight but what this thread sent in place just before.
  bool own = unled_.loop == this && unled_.generation == generation_;
  quiet = parked && (idle_at_ == generation_ || own);
  if (unled_.loop != nullptr && unled_.loop != this) {
    // A wait on another client's loop that this thread will not lead.
    EventLoop* other = unled_.loop;
    unled_ = {};
    other->unpark();
  }
  running_ = this;
  // The loop thread may have been parked for long: a deadline set by the
  // task counts from now, not from libuv's last look at the clock.
  uv_update_time(&loop_);
  task();
  // The loop thread's prepare/check handles would write this turn's output.
  run_flushes();
  ++generation_;
  return true;
}

bool EventLoop::interest_pending() const {
  // libuv hands new or changed socket interest to epoll only from inside
  // uv_run (its watcher queue, empty when it points at itself), so a thread
  // sleeping on the epoll descriptor would not see it.
  void* const* watchers = loop_.watcher_queue;
  return watchers[0] != static_cast<const void*>(&loop_.watcher_queue);
}

bool EventLoop::loop_needs_waking() { return interest_pending() || timer_before_wake_up(); }

bool EventLoop::timer_before_wake_up() {
  uv_update_time(&loop_);
  int timeout = uv_backend_timeout(&loop_);
  if (timeout == 0) return true;  // callbacks pending, handles closing
  if (timeout < 0) return false;
  // A timer set here that falls due before the loop thread would wake.
  auto due = static_cast<std::int64_t>(uv_now(&loop_)) + timeout;
  return sleeps_until_ < 0 || due < sleeps_until_;
}

void EventLoop::drain() {
  // A caller leading the loop leaves posted tasks to the loop thread, and
  // hands the loop back at once.
  if (leading_) return;
  // A bounded batch, oldest first: a thousand lock_async calls made at once
  // are a thousand tasks, and run back to back they kept the loop off the
  // sockets for seconds while the server, its window of commands answered,
  // sat idle. The rest run after the loop has read and written (the
  // wake-up is sent again, so its poll does not sleep).
  constexpr std::size_t most_tasks = 256;
  std::deque<std::function<void()>> batch;
  bool more = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (tasks_.size() <= most_tasks) {
      batch.swap(tasks_);
    } else {
      auto end = tasks_.begin() + static_cast<std::ptrdiff_t>(most_tasks);
      batch.assign(std::make_move_iterator(tasks_.begin()), std::make_move_iterator(end));
      tasks_.erase(tasks_.begin(), end);
      more = true;
    }
  }
  for (auto& task : batch) task();
  if (more && !stopping_) {
    uv_async_send(&wakeup_);
    return;
  }
  if (stopping_ && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&wakeup_))) {
    // The shutdown task is the last one posted (nothing is accepted after
    // it); anything still queued ahead of nothing runs now, before the
    // handles close.
    std::deque<std::function<void()>> rest;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      rest.swap(tasks_);
    }
    for (auto& task : rest) task();
    // The shutdown task ran: close our own handles; uv_run returns once the
    // handles closed by `last_` (connections) have finished closing too.
    timers_.clear();
    idle_probe_ = nullptr;
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
  // The loop handles what is ready holding run_mutex_, then sleeps outside
  // it: in poll(2) on libuv's epoll descriptor until an event or its next
  // timer, or, when nothing is in flight that a socket could answer (the
  // idle probe), on park_fd_ until its next timer, a wake-up or a hang-up. Callers
  // hand it work through post() (one eventfd write, coalesced by libuv while
  // a wake-up is pending), or run their task themselves while it sleeps,
  // and then may wait for their answer on the sockets themselves while it is
  // parked (lead_until); otherwise it answers through their promises.
  for (;;) {
    int timeout = 0;
    bool park = false;
    {
      std::lock_guard<std::mutex> guard(run_mutex_);
      if (deferred_timers_) {
        deferred_timers_ = false;
        rearm();
      }
      if (uv_run(&loop_, UV_RUN_NOWAIT) == 0) break;  // every handle closed: stopped
      bool queued = false;
      {
        std::lock_guard<std::mutex> inner(mutex_);
        queued = !tasks_.empty();
      }
      // Posted while a caller led the loop, whose run took the wake-up.
      // Run here, outside uv_run, their commands would wait for the next
      // turn's flush handles: after the sleep below, i.e. until a timer.
      if (queued) {
        drain();
        run_flushes();
      }
      ++generation_;
      if (!interest_pending()) timeout = uv_backend_timeout(&loop_);
      sleeps_until_ = timeout < 0 ? -1 : static_cast<std::int64_t>(uv_now(&loop_)) + timeout;
      if (timeout != 0 && idle()) {
        idle_at_ = generation_;
        std::lock_guard<std::mutex> inner(mutex_);
        park = !unpark_ && accepting_ && tasks_.empty();
        clear_signal();
        parked_ = park;
      }
    }
    if (timeout == 0) continue;
    if (park) {
      // Woken by signal_parked(), its next timer, or a socket the server
      // closed (reconnecting at once, as when it watches them all).
      epoll_event events[8];
      ::epoll_wait(park_fd_, events, 8, timeout);
      std::lock_guard<std::mutex> lock(mutex_);
      clear_signal();
      parked_ = false;
      if (leader_) {
        // A caller runs the loop: have it hand the loop back (it sees the
        // wake-up in epoll), then take the next turn once it has.
        loop_wanted_ = true;
        uv_async_send(&wakeup_);
      }
      continue;
    }
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
    signal_parked();
  }
  thread_.join();
  uv_loop_close(&loop_);
  ::close(park_fd_);
  ::close(unpark_fd_);
}

}  // namespace warden::detail
