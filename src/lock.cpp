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
using detail::Reply;
using std::chrono::milliseconds;

namespace {

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
  if (auto problem = bad_owner(owner)) return detail::failed<void>(errc::invalid_argument, core->message(*problem));
  return detail::submit<void>(core, [owner](LockCore& lock, detail::promise_ptr<void> promise) {
    lock.release(owner, [promise](std::error_code error, const std::string& message) {
      if (error) return detail::fail(promise, error, message);
      promise->set_value();
    });
  });
}

template <class T, class Convert>
std::future<T> query(const std::shared_ptr<LockCore>& core, std::vector<std::string> argv, Convert convert) {
  return detail::submit<T>(core, [argv = std::move(argv), convert](LockCore& lock, detail::promise_ptr<T> promise) {
    lock.query(argv, [promise, convert](std::error_code error, Reply reply, const std::string& message) {
      if (error) return detail::fail(promise, error, message);
      promise->set_value(convert(reply));
    });
  });
}

std::future<bool> held_by(const std::shared_ptr<LockCore>& core, thread_id owner) {
  return query<bool>(core, {"HEXISTS", core->name(), core->owner_field(owner)},
                     [](const Reply& reply) { return reply.integer == 1; });
}

}  // namespace

Lock::Lock(std::shared_ptr<detail::LockCore> core) noexcept : core_(std::move(core)) {}

const std::string& Lock::name() const noexcept { return core_->name(); }

void Lock::lock() {
  detail::check_blocking(*core_, "lock()");
  detail::get_soon(acquire<void>(core_, current_thread_id(), std::nullopt, std::nullopt));
}

void Lock::lock(const cancel_token& cancel) {
  detail::check_blocking(*core_, "lock(cancel)");
  detail::get_soon(acquire<void>(core_, current_thread_id(), std::nullopt, std::nullopt, cancel));
}

void Lock::lock_with_lease(milliseconds lease) {
  detail::check_blocking(*core_, "lock(lease)");
  detail::get_soon(acquire<void>(core_, current_thread_id(), std::nullopt, lease));
}

bool Lock::try_lock() {
  detail::check_blocking(*core_, "try_lock()");
  return detail::get_soon(acquire(core_, current_thread_id(), milliseconds{0}, std::nullopt));
}

bool Lock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  detail::check_blocking(*core_, "try_lock_for()");
  return detail::get_soon(acquire(core_, current_thread_id(), wait, lease));
}

void Lock::unlock() {
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
  detail::check_blocking(*core_, "force_unlock()");
  return detail::get_soon(force_unlock_async());
}

bool Lock::is_locked() const {
  detail::check_blocking(*core_, "is_locked()");
  return detail::get_soon(is_locked_async());
}

bool Lock::is_held_by_current_thread() const { return is_held_by_thread(current_thread_id()); }

bool Lock::is_held_by_thread(thread_id owner) const {
  detail::check_blocking(*core_, "is_held_by_thread()");
  return detail::get_soon(held_by(core_, owner));
}

int Lock::hold_count() const {
  detail::check_blocking(*core_, "hold_count()");
  return detail::get_soon(
      query<int>(core_, {"HGET", core_->name(), core_->owner_field(current_thread_id())},
                 [](const Reply& reply) { return reply.is_nil() ? 0 : std::atoi(reply.str.c_str()); }));
}

std::optional<milliseconds> Lock::remain_time_to_live() const {
  detail::check_blocking(*core_, "remain_time_to_live()");
  return detail::get_soon(remain_time_to_live_async());
}

std::chrono::steady_clock::time_point Lock::valid_until() const { return valid_until(current_thread_id()); }

std::chrono::steady_clock::time_point Lock::valid_until(thread_id owner) const {
  return core_->client().watchdog().valid_until(*core_, owner);
}

void Lock::on_lost(std::function<void(const LockLost&)> callback) { core_->set_lost_handler(std::move(callback)); }

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
  return detail::submit<bool>(core_, [](LockCore& lock, detail::promise_ptr<bool> promise) {
    lock.force_release([promise](std::error_code error, bool deleted, const std::string& message) {
      if (error) return detail::fail(promise, error, message);
      promise->set_value(deleted);
    });
  });
}

std::future<bool> Lock::is_locked_async() const {
  return query<bool>(core_, core_->locked_query(), [core = core_](const Reply& reply) { return core->locked(reply); });
}

std::future<std::optional<milliseconds>> Lock::remain_time_to_live_async() const {
  return query<std::optional<milliseconds>>(core_, {"PTTL", core_->name()},
                                            [](const Reply& reply) -> std::optional<milliseconds> {
                                              if (reply.integer == -2) return std::nullopt;
                                              if (reply.integer == -1) return milliseconds::max();
                                              return milliseconds{reply.integer};
                                            });
}

}  // namespace warden
