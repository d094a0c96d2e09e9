#include "lock/lost_listeners.hpp"

#include <algorithm>
#include <vector>

namespace warden::detail {
namespace {

// The listener sets this thread is notifying right now: a listener removing
// itself (or another of the same lock) must not wait for its own notification.
thread_local std::vector<const LostListeners*> notifying_here;

}  // namespace

std::uint64_t LostListeners::add(listener callback) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto token = next_++;
  listeners_.emplace(token, std::move(callback));
  return token;
}

void LostListeners::remove(std::uint64_t token) {
  std::unique_lock<std::mutex> guard(mutex_);
  listeners_.erase(token);
  auto own = static_cast<int>(std::count(notifying_here.begin(), notifying_here.end(), this));
  idle_.wait(guard, [&] { return notifying_ <= own; });
}

void LostListeners::notify(const LockLost& event, const log_fn& log) const {
  std::vector<std::pair<std::uint64_t, listener>> snapshot;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    snapshot.assign(listeners_.begin(), listeners_.end());
    ++notifying_;
  }
  notifying_here.push_back(this);
  for (auto& [token, callback] : snapshot) {
    {
      // Removed meanwhile: remove() waits for this notification, so skipping
      // here is what makes "never called after remove() returned" hold.
      std::lock_guard<std::mutex> guard(mutex_);
      if (listeners_.count(token) == 0) continue;
    }
    call_guarded(log, "a lost-lock listener", callback, event);
  }
  notifying_here.pop_back();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    --notifying_;
  }
  idle_.notify_all();
}

}  // namespace warden::detail
