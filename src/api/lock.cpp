// The public Lock handle: validation, then the operation on the I/O thread,
// whose outcome goes to a future, a completion callback, or a waiting caller.
#include <warden/error.hpp>
#include <warden/lock.hpp>

#include <fmt/format.h>

#include "lock/acquire_claim.hpp"
#include "topology/client_core.hpp"
#include "api/future_bridge.hpp"
#include "lock/limits.hpp"
#include "lock/lock_core.hpp"

namespace warden {

using detail::LockCore;
using detail::Reply;
using std::chrono::milliseconds;

namespace {

struct none {};

// What an operation ended with: the error and its text, or the value.
template <class T>
struct Outcome {
  std::error_code error;
  std::string message;
  T value{};
};
template <class T>
using sink = std::function<void(Outcome<T>)>;

template <class T>
Outcome<T> failure(std::error_code error, std::string message) {
  return Outcome<T>{error, std::move(message), T{}};
}

std::string moved_from(std::string_view call) {
  return fmt::format("warden: {} called on a moved-from lock handle", call);
}

// A moved-from handle has no core: its calls fail at once, on the calling
// thread (there is no I/O thread to hop to). True when `out` was told so.
template <class T>
bool refused_moved_from(const std::shared_ptr<LockCore>& core, std::string_view call, sink<T>& out) {
  if (core) return false;
  out(failure<T>(make_error_code(errc::invalid_argument), moved_from(call)));
  return true;
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

// Delivers `outcome` on the I/O thread; on the calling thread when the client
// is shut down (its I/O thread is gone).
template <class T>
void deliver(const std::shared_ptr<LockCore>& core, sink<T> out, Outcome<T> outcome) {
  auto task = [out, outcome]() mutable { out(std::move(outcome)); };
  if (!core->client().post(task)) task();
}

// Runs op(lock, out) on the I/O thread.
template <class T, class Op>
void submit(const std::shared_ptr<LockCore>& core, Op op, sink<T> out) {
  bool queued = core->client().post([core, op = std::move(op), out]() mutable { op(*core, std::move(out)); });
  if (!queued) out(failure<T>(make_error_code(errc::shut_down), core->message("the client is shut down")));
}

// ---- the operations, each reporting to a sink ----

// value: whether the owner now holds the lock.
void acquire(const std::shared_ptr<LockCore>& core, thread_id owner, std::optional<milliseconds> wait,
             std::optional<milliseconds> lease, sink<bool> out, cancel_token cancel = {}) {
  if (refused_moved_from(core, "an acquire", out)) return;
  for (auto problem : {bad_owner(owner), bad_wait(wait), bad_lease(lease)}) {
    if (problem) {
      return deliver(core, std::move(out), failure<bool>(make_error_code(errc::invalid_argument), core->message(*problem)));
    }
  }
  submit<bool>(
      core,
      [owner, wait, lease, cancel](LockCore& lock, sink<bool> out) {
        lock.acquire(
            owner, wait, lease,
            [out](std::error_code error, bool acquired, const std::string& message) {
              out(Outcome<bool>{error, message, !error && acquired});
            },
            cancel);
      },
      std::move(out));
}

void release(const std::shared_ptr<LockCore>& core, thread_id owner, sink<none> out) {
  if (refused_moved_from(core, "a release", out)) return;
  if (auto problem = bad_owner(owner)) {
    return deliver(core, std::move(out), failure<none>(make_error_code(errc::invalid_argument), core->message(*problem)));
  }
  submit<none>(
      core,
      [owner](LockCore& lock, sink<none> out) {
        lock.release(owner, [out](std::error_code error, const std::string& message) {
          out(Outcome<none>{error, message, {}});
        });
      },
      std::move(out));
}

void force_release(const std::shared_ptr<LockCore>& core, sink<bool> out) {
  if (refused_moved_from(core, "force_unlock", out)) return;
  submit<bool>(
      core,
      [](LockCore& lock, sink<bool> out) {
        lock.force_release([out](std::error_code error, bool deleted, const std::string& message) {
          out(Outcome<bool>{error, message, deleted});
        });
      },
      std::move(out));
}

// A query answered from one inspection of the lock (which also checks that
// the key is a lock of this kind).
template <class T, class Convert>
void inspect(const std::shared_ptr<LockCore>& core, thread_id owner, std::string_view call, Convert convert,
             sink<T> out) {
  if (refused_moved_from(core, call, out)) return;
  submit<T>(
      core,
      [owner, convert](LockCore& lock, sink<T> out) {
        lock.inspect(owner, [&lock, out, convert](std::error_code error, detail::Inspection state,
                                                  const std::string& message) {
          if (error) return out(failure<T>(error, message));
          out(Outcome<T>{{}, {}, convert(lock, state)});
        });
      },
      std::move(out));
}

void held_by(const std::shared_ptr<LockCore>& core, thread_id owner, sink<bool> out) {
  inspect<bool>(core, owner, "is_held_by_thread", [](LockCore&, const detail::Inspection& state) { return state.count > 0; },
                std::move(out));
}

void count_of(const std::shared_ptr<LockCore>& core, thread_id owner, sink<int> out) {
  inspect<int>(core, owner, "hold_count",
               [](LockCore&, const detail::Inspection& state) { return static_cast<int>(state.count); }, std::move(out));
}

void locked(const std::shared_ptr<LockCore>& core, sink<bool> out) {
  inspect<bool>(core, current_thread_id(), "is_locked",
                [](LockCore& lock, const detail::Inspection& state) { return lock.locked(state); }, std::move(out));
}

void time_to_live(const std::shared_ptr<LockCore>& core, sink<std::optional<milliseconds>> out) {
  inspect<std::optional<milliseconds>>(
      core, current_thread_id(), "remain_time_to_live",
      [](LockCore&, const detail::Inspection& state) -> std::optional<milliseconds> {
        if (state.pttl == -2) return std::nullopt;
        if (state.pttl == -1) return milliseconds::max();
        return milliseconds{state.pttl};
      },
      std::move(out));
}

// ---- where outcomes go ----

// To a std::future: failures as warden::Error.
template <class T>
struct Promised {
  std::shared_ptr<std::promise<T>> promise = std::make_shared<std::promise<T>>();

  template <class V>
  sink<V> sink_for() const {
    return [promise = promise](Outcome<V> outcome) {
      if (outcome.error) return promise->set_exception(std::make_exception_ptr(Error(outcome.error, outcome.message)));
      if constexpr (std::is_void_v<T>) {
        promise->set_value();
      } else {
        promise->set_value(std::move(outcome.value));
      }
    };
  }
  std::future<T> future() const { return promise->get_future(); }
};

template <class T, class V = T, class Start>
std::future<T> as_future(const Start& start) {
  Promised<T> promised;
  auto future = promised.future();
  // Only a promise hears the outcome: the operation may start on this thread.
  detail::EventLoop::CallerWaits in_place;
  start(promised.template sink_for<V>());
  return future;
}

// To a user's completion callback, guarded.
template <class T, class V = T>
sink<V> as_callback(const std::shared_ptr<LockCore>& core, completion<T> done) {
  // A moved-from handle has no client: its failure is only the callback's.
  std::shared_ptr<detail::ClientCore> client = core ? core->client_ptr() : nullptr;
  return [client, done = std::move(done)](Outcome<V> outcome) {
    if (outcome.error && client) client->log(log_level::debug, outcome.message);
    auto log = [client](log_level level, const std::string& text) {
      if (client) client->log(level, text);
    };
    if (!done) return;
    if constexpr (std::is_void_v<T>) {
      detail::call_guarded(log, "a completion callback", done, outcome.error);
    } else {
      detail::call_guarded(log, "a completion callback", done, outcome.error, std::move(outcome.value));
    }
  };
}

// To an AcquireFuture, which releases the hold if nobody collects it.
template <class T>
AcquireFuture<T> acquire_future(const std::shared_ptr<LockCore>& core, thread_id owner,
                                std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                                cancel_token cancel = {}) {
  auto claim = std::make_shared<detail::AcquireClaim>([core, owner] {
    release(core, owner, [core](Outcome<none> outcome) {
      if (outcome.error) core->client().log(log_level::warning, outcome.message);
    });
  });
  Promised<T> promised;
  auto future = promised.future();
  acquire(
      core, owner, wait, lease,
      [claim, out = promised.template sink_for<bool>()](Outcome<bool> outcome) {
        claim->completed(!outcome.error && outcome.value);
        out(std::move(outcome));
      },
      std::move(cancel));
  return AcquireFuture<T>(std::move(future), std::move(claim));
}

// The value of an acquire for ever: held, or an error.
template <class T, class Start>
T wait_blocking(const std::shared_ptr<LockCore>& core, std::string_view call, const Start& start) {
  detail::check_blocking(live(core, call), call);
  return as_future<T>(start).get();
}

// Waits for a release on the calling thread, or, on the I/O thread (where
// waiting would deadlock), starts it and leaves the outcome to the logger.
std::error_code release_now(const std::shared_ptr<LockCore>& core, bool wait_on_loop_thread_fails) noexcept {
  if (!core) return make_error_code(errc::invalid_argument);  // a moved-from handle: no lock, no logger
  try {
    auto owner = current_thread_id();
    auto log_failure = [core](const Outcome<none>& outcome) {
      if (outcome.error) core->client().log(log_level::error, outcome.message);
    };
    if (core->client().loop().in_loop_thread()) {
      if (wait_on_loop_thread_fails) {
        auto text = core->message(
            "unlock_checked() blocks, and was called on the client's I/O thread (inside a callback); use the "
            "_async form there. Nothing was released.");
        core->client().log(log_level::error, text);
        return make_error_code(errc::would_deadlock);
      }
      release(core, owner, log_failure);
      return {};
    }
    auto promise = std::make_shared<std::promise<Outcome<none>>>();
    auto future = promise->get_future();
    {
      detail::EventLoop::CallerWaits in_place;
      release(core, owner, [promise](Outcome<none> outcome) { promise->set_value(std::move(outcome)); });
    }
    auto outcome = future.get();
    log_failure(outcome);
    return outcome.error;
  } catch (const std::exception& error) {
    try {
      core->client().log(log_level::error, core->message(std::string("unlock failed: ") + error.what()));
    } catch (...) {
    }
  } catch (...) {
  }
  return make_error_code(errc::server_error);
}

}  // namespace

Lock::Lock(std::shared_ptr<detail::LockCore> core) noexcept : core_(std::move(core)) {}

const std::string& Lock::name() const noexcept {
  static const std::string none;
  return core_ ? core_->name() : none;
}

void Lock::lock() {
  wait_blocking<none>(core_, "lock()", [this](sink<none> out) {
    acquire(core_, current_thread_id(), std::nullopt, std::nullopt,
            [out](Outcome<bool> outcome) { out(Outcome<none>{outcome.error, outcome.message, {}}); });
  });
}

void Lock::lock(const cancel_token& cancel) {
  wait_blocking<none>(core_, "lock(cancel)", [this, &cancel](sink<none> out) {
    acquire(
        core_, current_thread_id(), std::nullopt, std::nullopt,
        [out](Outcome<bool> outcome) { out(Outcome<none>{outcome.error, outcome.message, {}}); }, cancel);
  });
}

void Lock::lock_with_lease(milliseconds lease) {
  wait_blocking<none>(core_, "lock(lease)", [this, lease](sink<none> out) {
    acquire(core_, current_thread_id(), std::nullopt, lease,
            [out](Outcome<bool> outcome) { out(Outcome<none>{outcome.error, outcome.message, {}}); });
  });
}

bool Lock::try_lock() { return try_lock_for_ms(milliseconds{0}, std::nullopt); }

bool Lock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  return wait_blocking<bool>(core_, wait.count() == 0 && !lease ? "try_lock()" : "try_lock_for()",
                             [this, wait, lease](sink<bool> out) {
                               acquire(core_, current_thread_id(), wait, lease, std::move(out));
                             });
}

void Lock::unlock() noexcept { (void)release_now(core_, false); }

std::error_code Lock::unlock_checked() noexcept { return release_now(core_, true); }

bool Lock::force_unlock() {
  return wait_blocking<bool>(core_, "force_unlock()", [this](sink<bool> out) { force_release(core_, std::move(out)); });
}

bool Lock::is_locked() const {
  return wait_blocking<bool>(core_, "is_locked()", [this](sink<bool> out) { locked(core_, std::move(out)); });
}

bool Lock::is_held_by_current_thread() const { return is_held_by_thread(current_thread_id()); }

bool Lock::is_held_by_thread(thread_id owner) const {
  return wait_blocking<bool>(core_, "is_held_by_thread()",
                             [this, owner](sink<bool> out) { held_by(core_, owner, std::move(out)); });
}

int Lock::hold_count() const {
  return wait_blocking<int>(core_, "hold_count()",
                            [this](sink<int> out) { count_of(core_, current_thread_id(), std::move(out)); });
}

std::optional<milliseconds> Lock::remain_time_to_live() const {
  return wait_blocking<std::optional<milliseconds>>(
      core_, "remain_time_to_live()", [this](sink<std::optional<milliseconds>> out) { time_to_live(core_, std::move(out)); });
}

std::chrono::steady_clock::time_point Lock::valid_until() const { return valid_until(current_thread_id()); }

std::chrono::steady_clock::time_point Lock::valid_until(thread_id owner) const {
  return live(core_, "valid_until()").client().holds().valid_until(*core_, owner);
}

lost_listener_id Lock::add_lost_listener(lost_listener listener) {
  return live(core_, "add_lost_listener()").add_lost_listener(std::move(listener));
}

void Lock::remove_lost_listener(lost_listener_id id) {
  if (core_) core_->remove_lost_listener(id);
}

LostSubscription Lock::subscribe_lost(lost_listener listener) {
  auto id = live(core_, "subscribe_lost()").add_lost_listener(std::move(listener));
  return LostSubscription([core = core_, id] { core->remove_lost_listener(id); });
}

AcquireFuture<void> Lock::lock_async(thread_id owner) {
  return acquire_future<void>(core_, owner, std::nullopt, std::nullopt);
}

AcquireFuture<void> Lock::lock_async(thread_id owner, const cancel_token& cancel) {
  return acquire_future<void>(core_, owner, std::nullopt, std::nullopt, cancel);
}

AcquireFuture<void> Lock::lock_async(thread_id owner, milliseconds lease) {
  return acquire_future<void>(core_, owner, std::nullopt, lease);
}

void Lock::lock_async(thread_id owner, completion<void> done) {
  acquire(core_, owner, std::nullopt, std::nullopt, as_callback<void, bool>(core_, std::move(done)));
}

void Lock::lock_async(thread_id owner, milliseconds lease, completion<void> done) {
  acquire(core_, owner, std::nullopt, lease, as_callback<void, bool>(core_, std::move(done)));
}

AcquireFuture<bool> Lock::try_lock_async(thread_id owner, milliseconds wait) {
  return acquire_future<bool>(core_, owner, wait, std::nullopt);
}

AcquireFuture<bool> Lock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease) {
  return acquire_future<bool>(core_, owner, wait, lease);
}

void Lock::try_lock_async(thread_id owner, milliseconds wait, completion<bool> done) {
  acquire(core_, owner, wait, std::nullopt, as_callback<bool>(core_, std::move(done)));
}

void Lock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease, completion<bool> done) {
  acquire(core_, owner, wait, lease, as_callback<bool>(core_, std::move(done)));
}

std::future<void> Lock::unlock_async(thread_id owner) {
  return as_future<void, none>([&](sink<none> out) { release(core_, owner, std::move(out)); });
}

void Lock::unlock_async(thread_id owner, completion<void> done) {
  release(core_, owner, as_callback<void, none>(core_, std::move(done)));
}

std::future<bool> Lock::force_unlock_async() {
  return as_future<bool>([&](sink<bool> out) { force_release(core_, std::move(out)); });
}

void Lock::force_unlock_async(completion<bool> done) { force_release(core_, as_callback<bool>(core_, std::move(done))); }

std::future<bool> Lock::is_locked_async() const {
  return as_future<bool>([&](sink<bool> out) { locked(core_, std::move(out)); });
}

void Lock::is_locked_async(completion<bool> done) const { locked(core_, as_callback<bool>(core_, std::move(done))); }

std::future<bool> Lock::is_held_by_thread_async(thread_id owner) const {
  return as_future<bool>([&](sink<bool> out) { held_by(core_, owner, std::move(out)); });
}

void Lock::is_held_by_thread_async(thread_id owner, completion<bool> done) const {
  held_by(core_, owner, as_callback<bool>(core_, std::move(done)));
}

std::future<int> Lock::hold_count_async(thread_id owner) const {
  return as_future<int>([&](sink<int> out) { count_of(core_, owner, std::move(out)); });
}

void Lock::hold_count_async(thread_id owner, completion<int> done) const {
  count_of(core_, owner, as_callback<int>(core_, std::move(done)));
}

std::future<std::optional<milliseconds>> Lock::remain_time_to_live_async() const {
  return as_future<std::optional<milliseconds>>(
      [&](sink<std::optional<milliseconds>> out) { time_to_live(core_, std::move(out)); });
}

void Lock::remain_time_to_live_async(completion<std::optional<milliseconds>> done) const {
  time_to_live(core_, as_callback<std::optional<milliseconds>>(core_, std::move(done)));
}

}  // namespace warden
