// The public Lock handle: validation, then the operation on the I/O thread,
// bridged to a future (async) or waited for (sync).
#include <warden/error.hpp>
#include <warden/lock.hpp>

#include <fmt/format.h>

#include "client_core.hpp"
#include "limits.hpp"
#include "future_bridge.hpp"
#include "lock_core.hpp"

namespace warden {

using detail::LockCore;
using std::chrono::milliseconds;

namespace {

std::string moved_from(std::string_view call) {
  return fmt::format("warden: {} called on a moved-from lock handle", call);
}

// The core of a handle that may have been moved from.
LockCore& live(const std::shared_ptr<LockCore>& core, std::string_view call) {
  if (!core) throw Error(errc::invalid_argument, moved_from(call));
  return *core;
}

std::optional<std::string> bad_lease(std::optional<milliseconds> lease) { return detail::lease_problem(lease); }

std::optional<std::string> bad_wait(std::optional<milliseconds> wait) {
  if (wait && wait->count() < 0) return fmt::format("the wait time must not be negative, got {} ms", wait->count());
  return std::nullopt;
}

std::optional<std::string> bad_owner(thread_id owner) {
  if (owner == 0) return std::string("owner thread id 0 is not a thread id warden hands out");
  return std::nullopt;
}

// T = bool: try-lock (false on time-out); T = void: wait for ever.
template <class T = bool>
std::future<T> acquire(const std::shared_ptr<LockCore>& core, thread_id owner, std::optional<milliseconds> wait,
                       std::optional<milliseconds> lease, cancel_token cancel = {}) {
  if (!core) return detail::failed<T>(errc::invalid_argument, moved_from("an acquire"));
  for (auto problem : {bad_owner(owner), bad_wait(wait), bad_lease(lease)}) {
    if (problem) return detail::failed<T>(errc::invalid_argument, core->message(*problem));
  }
  return detail::submit<T>(core, [owner, wait, lease, cancel](LockCore& lock, detail::promise_ptr<T> promise) {
    lock.acquire(
        owner, wait, lease,
        [promise](std::error_code error, bool acquired, const std::string& message) {
          if (error) return detail::fail(promise, error, message);
          if constexpr (std::is_void_v<T>) {
            (void)acquired;  // an unbounded wait ends held or with an error
            promise->set_value();
          } else {
            promise->set_value(acquired);
          }
        },
        cancel);
  });
}

std::future<void> release(const std::shared_ptr<LockCore>& core, thread_id owner) {
  if (!core) return detail::failed<void>(errc::invalid_argument, moved_from("a release"));
  if (auto problem = bad_owner(owner)) return detail::failed<void>(errc::invalid_argument, core->message(*problem));
  return detail::submit<void>(core, [owner](LockCore& lock, detail::promise_ptr<void> promise) {
    lock.release(owner, [promise](std::error_code error, const std::string& message) {
      if (error) return detail::fail(promise, error, message);
      promise->set_value();
    });
  });
}

// A query answered from one inspection of the lock (which also checks that
// the key is a lock of this kind).
template <class T, class Convert>
std::future<T> inspect(const std::shared_ptr<LockCore>& core, thread_id owner, Convert convert) {
  return detail::submit<T>(core, [owner, convert](LockCore& lock, detail::promise_ptr<T> promise) {
    lock.inspect(owner, [&lock, promise, convert](std::error_code error, detail::Inspection state,
                                                  const std::string& message) {
      if (error) return detail::fail(promise, error, message);
      promise->set_value(convert(lock, state));
    });
  });
}

std::future<bool> held_by(const std::shared_ptr<LockCore>& core, thread_id owner) {
  return inspect<bool>(core, owner, [](LockCore&, const detail::Inspection& state) { return state.count > 0; });
}


}  // namespace

Lock::Lock(std::shared_ptr<detail::LockCore> core) noexcept : core_(std::move(core)) {}

const std::string& Lock::name() const noexcept {
  static const std::string none;
  return core_ ? core_->name() : none;
}

void Lock::lock() {
  detail::check_blocking(live(core_, "lock()"), "lock()");
  detail::get_soon(acquire<void>(core_, current_thread_id(), std::nullopt, std::nullopt));
}

void Lock::lock(const cancel_token& cancel) {
  detail::check_blocking(live(core_, "lock(cancel)"), "lock(cancel)");
  detail::get_soon(acquire<void>(core_, current_thread_id(), std::nullopt, std::nullopt, cancel));
}

void Lock::lock_with_lease(milliseconds lease) {
  detail::check_blocking(live(core_, "lock(lease)"), "lock(lease)");
  detail::get_soon(acquire<void>(core_, current_thread_id(), std::nullopt, lease));
}

bool Lock::try_lock() {
  detail::check_blocking(live(core_, "try_lock()"), "try_lock()");
  return detail::get_soon(acquire(core_, current_thread_id(), milliseconds{0}, std::nullopt));
}

bool Lock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  detail::check_blocking(live(core_, "try_lock_for()"), "try_lock_for()");
  return detail::get_soon(acquire(core_, current_thread_id(), wait, lease));
}

void Lock::unlock() {
  if (!core_) return;  // a moved-from handle holds nothing
  detail::check_blocking(*core_, "unlock()");
  auto done = release(core_, current_thread_id());
  if (std::uncaught_exceptions() > 0) {
    // Unwinding (e.g. a guard's destructor after a throw): a second exception
    // would terminate the program. The failure is logged instead.
    try {
      done.get();
    } catch (const std::exception& error) {
      core_->client().log(log_level::error, error.what());
    }
    return;
  }
  detail::get_soon(std::move(done));
}

bool Lock::force_unlock() {
  detail::check_blocking(live(core_, "force_unlock()"), "force_unlock()");
  return detail::get_soon(force_unlock_async());
}

bool Lock::is_locked() const {
  detail::check_blocking(live(core_, "is_locked()"), "is_locked()");
  return detail::get_soon(is_locked_async());
}

bool Lock::is_held_by_current_thread() const { return is_held_by_thread(current_thread_id()); }

bool Lock::is_held_by_thread(thread_id owner) const {
  detail::check_blocking(live(core_, "is_held_by_thread()"), "is_held_by_thread()");
  return detail::get_soon(held_by(core_, owner));
}

int Lock::hold_count() const {
  detail::check_blocking(live(core_, "hold_count()"), "hold_count()");
  return detail::get_soon(inspect<int>(core_, current_thread_id(), [](LockCore&, const detail::Inspection& state) {
    return static_cast<int>(state.count);
  }));
}

std::optional<milliseconds> Lock::remain_time_to_live() const {
  detail::check_blocking(live(core_, "remain_time_to_live()"), "remain_time_to_live()");
  return detail::get_soon(remain_time_to_live_async());
}

std::chrono::steady_clock::time_point Lock::valid_until() const { return valid_until(current_thread_id()); }

std::chrono::steady_clock::time_point Lock::valid_until(thread_id owner) const {
  return live(core_, "valid_until()").client().watchdog().valid_until(*core_, owner);
}

void Lock::on_lost(std::function<void(const LockLost&)> callback) {
  live(core_, "on_lost()").set_lost_handler(std::move(callback));
}

std::future<void> Lock::lock_async(thread_id owner) { return acquire<void>(core_, owner, std::nullopt, std::nullopt); }

std::future<void> Lock::lock_async(thread_id owner, const cancel_token& cancel) {
  return acquire<void>(core_, owner, std::nullopt, std::nullopt, cancel);
}

std::future<void> Lock::lock_async(thread_id owner, milliseconds lease) {
  return acquire<void>(core_, owner, std::nullopt, lease);
}

std::future<bool> Lock::try_lock_async(thread_id owner, milliseconds wait) {
  return acquire(core_, owner, wait, std::nullopt);
}

std::future<bool> Lock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease) {
  return acquire(core_, owner, wait, lease);
}

std::future<void> Lock::unlock_async(thread_id owner) { return release(core_, owner); }

std::future<bool> Lock::force_unlock_async() {
  if (!core_) return detail::failed<bool>(errc::invalid_argument, moved_from("force_unlock_async()"));
  return detail::submit<bool>(core_, [](LockCore& lock, detail::promise_ptr<bool> promise) {
    lock.force_release([promise](std::error_code error, bool deleted, const std::string& message) {
      if (error) return detail::fail(promise, error, message);
      promise->set_value(deleted);
    });
  });
}

std::future<bool> Lock::is_locked_async() const {
  if (!core_) return detail::failed<bool>(errc::invalid_argument, moved_from("is_locked_async()"));
  return inspect<bool>(core_, current_thread_id(),
                       [](LockCore& lock, const detail::Inspection& state) { return lock.locked(state); });
}

std::future<std::optional<milliseconds>> Lock::remain_time_to_live_async() const {
  if (!core_) {
    return detail::failed<std::optional<milliseconds>>(errc::invalid_argument, moved_from("remain_time_to_live_async()"));
  }
  return inspect<std::optional<milliseconds>>(
      core_, current_thread_id(), [](LockCore&, const detail::Inspection& state) -> std::optional<milliseconds> {
        if (state.pttl == -2) return std::nullopt;
        if (state.pttl == -1) return milliseconds::max();
        return milliseconds{state.pttl};
      });
}

}  // namespace warden
