#include "lock/lost_listeners.hpp"

#include <algorithm>
#include <memory>
#include <vector>

namespace warden::detail {
namespace {

// The listener sets this thread is notifying right now: a listener removing
// itself (or another of the same lock) must not wait for its own notification.
thread_local std::vector<const LostListeners*> notifying_here;

}  // namespace

LostListeners::~LostListeners() { delete state_.load(std::memory_order_acquire); }

LostListeners::State& LostListeners::state() {
  if (State* state = state_.load(std::memory_order_acquire)) return *state;
  // Two first add()s may race: one state wins, the other is dropped.
  auto made = std::make_unique<State>();
  State* expected = nullptr;
  if (state_.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) return *made.release();
  return *expected;
}

std::uint64_t LostListeners::add(listener callback) {
  State& state = this->state();
  std::lock_guard<std::mutex> guard(state.mutex);
  auto token = state.next++;
  state.listeners.emplace(token, std::move(callback));
  return token;
}

void LostListeners::remove(std::uint64_t token) {
  // No state: no listener was ever added, so no token to remove.
  State* state = state_.load(std::memory_order_acquire);
  if (!state) return;
  std::unique_lock<std::mutex> guard(state->mutex);
  state->listeners.erase(token);
  auto own = static_cast<int>(std::count(notifying_here.begin(), notifying_here.end(), this));
  state->idle.wait(guard, [&] { return state->notifying <= own; });
}

void LostListeners::notify(const LockLost& event, const log_fn& log) const {
  State* state = state_.load(std::memory_order_acquire);
  if (!state) return;  // nobody ever listened
  std::vector<std::pair<std::uint64_t, listener>> snapshot;
  {
    std::lock_guard<std::mutex> guard(state->mutex);
    snapshot.assign(state->listeners.begin(), state->listeners.end());
    ++state->notifying;
  }
  notifying_here.push_back(this);
  for (auto& [token, callback] : snapshot) {
    {
      // Removed meanwhile: remove() waits for this notification, so skipping
      // here is what makes "never called after remove() returned" hold.
      std::lock_guard<std::mutex> guard(state->mutex);
      if (state->listeners.count(token) == 0) continue;
    }
    call_guarded(log, "a lost-lock listener", callback, event);
  }
  notifying_here.pop_back();
  {
    std::lock_guard<std::mutex> guard(state->mutex);
    --state->notifying;
  }
  state->idle.notify_all();
}

}  // namespace warden::detail
