#include "base/cancel_state.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace warden::detail {

struct cancel_state::impl {
  std::mutex mutex;
  bool cancelled = false;
  std::uint64_t next = 1;
  std::map<std::uint64_t, std::function<void()>> callbacks;
  // The callback cancel() is running now, and on which thread: remove() of
  // it from another thread waits for it to return.
  std::uint64_t running = 0;
  std::thread::id running_on{};
  std::condition_variable done;
};

cancel_state::cancel_state() : impl_(std::make_shared<impl>()) {}

bool cancel_state::cancelled() const noexcept {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->cancelled;
}

void cancel_state::cancel() noexcept {
  std::unique_lock<std::mutex> guard(impl_->mutex);
  if (impl_->cancelled) return;
  impl_->cancelled = true;
  while (!impl_->callbacks.empty()) {
    auto first = impl_->callbacks.begin();
    auto id = first->first;
    auto callback = std::move(first->second);
    impl_->callbacks.erase(first);
    impl_->running = id;
    impl_->running_on = std::this_thread::get_id();
    guard.unlock();
    try {
      callback();
    } catch (...) {
      // A cancellation callback posts to an I/O thread; it has nothing to report.
    }
    guard.lock();
    impl_->running = 0;
    impl_->done.notify_all();
  }
}

std::uint64_t cancel_state::add(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> guard(impl_->mutex);
    if (!impl_->cancelled) {
      auto id = impl_->next++;
      impl_->callbacks.emplace(id, std::move(callback));
      return id;
    }
  }
  callback();
  return 0;
}

void cancel_state::remove(std::uint64_t handle) noexcept {
  if (handle == 0) return;
  std::unique_lock<std::mutex> guard(impl_->mutex);
  impl_->callbacks.erase(handle);
  if (impl_->running == handle && impl_->running_on != std::this_thread::get_id()) {
    impl_->done.wait(guard, [&] { return impl_->running != handle; });
  }
}

}  // namespace warden::detail
