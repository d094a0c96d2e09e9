// What the public lock handles share: input checks, running an operation on
// the I/O thread, and delivering its outcome to a future, a completion
// callback or a waiting caller. Internal to src/api.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include <warden/acquire_future.hpp>
#include <warden/cancel.hpp>
#include <warden/error.hpp>
#include <warden/lock.hpp>
#include <warden/lock_options.hpp>

#include "api/access.hpp"
#include "api/future_bridge.hpp"
#include "base/limits.hpp"
#include "client/client_core.hpp"
#include "lock/acquire_claim.hpp"
#include "lock/lock_core.hpp"

namespace warden::detail::calls {

using std::chrono::milliseconds;

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

inline std::string moved_from(std::string_view call) {
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
inline LockCore& live(const std::shared_ptr<LockCore>& core, std::string_view call) {
  if (!core) throw Error(errc::invalid_argument, moved_from(call));
  return *core;
}

inline std::optional<std::string> bad_lease(std::optional<milliseconds> lease) { return lease_problem(lease); }

inline std::optional<std::string> bad_wait(std::optional<milliseconds> wait) {
  if (wait && wait->count() < 0) return fmt::format("the wait time must not be negative, got {} ms", wait->count());
  return std::nullopt;
}

inline std::optional<std::string> bad_owner(thread_id owner) {
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
  bool queued = core->client().post_operation([core, op = std::move(op), out]() mutable { op(*core, std::move(out)); });
  if (!queued) out(failure<T>(make_error_code(errc::shut_down), core->message("the client is shut down")));
}

// ---- the operations shared by every kind ----

// What an acquire took: whether the owner now holds the lock, and the hold's
// fencing token (a FencedLock's; it always comes with a hold of one).
struct Acquired {
  bool held = false;
  std::optional<std::int64_t> token;
};

inline constexpr const char* wait_refused =
    "the lock forms wait for ever and take no wait: use a try_lock form for a bounded wait";

// What is wrong with an acquire's arguments, if anything (owner, wait, lease,
// in that order).
std::optional<std::string> acquire_problem(thread_id owner, std::optional<milliseconds> wait,
                                           std::optional<milliseconds> lease);

// What an acquire catches besides the hold: the per-kind policy of the
// handle that asks. A FencedLock's token forms catch the hold's token; every
// other form takes the hold alone (a fenced core draws the token all the same).
enum class catches { hold, token };

// Runs an acquire on the I/O thread: the op reports to `out` (a callable
// taking Outcome<Acquired>), kept as it is rather than wrapped in a sink
// first, so that a parked waiter keeps one callback object, not two.
template <catches What, class Out>
void start_acquire(LockCore& lock, thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                   Out out, cancel_token cancel, std::chrono::steady_clock::time_point called) {
  AcquireOptions options;
  options.cancel = std::move(cancel);
  options.called = called;
  if constexpr (What == catches::hold) {
    // No token is asked for: nothing to catch it in.
    lock.acquire(
        owner, wait, lease,
        [out = std::move(out)](std::error_code error, bool acquired, const std::string& message) {
          out(Outcome<Acquired>{error, message, Acquired{!error && acquired, std::nullopt}});
        },
        std::move(options));
  } else {
    // Told (on this thread) just before the callback below, if at all.
    auto token = std::make_shared<std::optional<std::int64_t>>();
    options.on_token = [token](std::int64_t value) { *token = value; };
    lock.acquire(
        owner, wait, lease,
        [out = std::move(out), token](std::error_code error, bool acquired, const std::string& message) {
          bool held = !error && acquired;
          out(Outcome<Acquired>{error, message, Acquired{held, held ? *token : std::nullopt}});
        },
        std::move(options));
  }
}

template <catches What = catches::hold, class Out>
void acquire(const std::shared_ptr<LockCore>& core, thread_id owner, std::optional<milliseconds> wait,
             std::optional<milliseconds> lease, Out out, cancel_token cancel = {}) {
  if (!core) return out(failure<Acquired>(make_error_code(errc::invalid_argument), moved_from("an acquire")));
  if (auto problem = acquire_problem(owner, wait, lease)) {
    return deliver<Acquired>(core, std::move(out),
                             failure<Acquired>(make_error_code(errc::invalid_argument), core->message(*problem)));
  }
  // A copy stays here to hear of a client already shut down.
  auto called = std::chrono::steady_clock::now();
  bool queued =
      core->client().post_operation([core, owner, wait, lease, cancel = std::move(cancel), out, called]() mutable {
        start_acquire<What>(*core, owner, wait, lease, std::move(out), std::move(cancel), called);
      });
  if (!queued) out(failure<Acquired>(make_error_code(errc::shut_down), core->message("the client is shut down")));
}

// The acquire of a try_lock form: waits at most options.wait() (unset: one
// attempt).
template <catches What = catches::hold, class Out>
void try_acquire(const std::shared_ptr<LockCore>& core, thread_id owner, const lock_options& options, Out out) {
  acquire<What>(core, owner, options.wait().value_or(milliseconds{0}), options.lease(), std::move(out),
                options.cancel());
}

// The acquire of a lock form: waits for ever, so a wait in its options is a
// mistake rather than a bound (errc::invalid_argument).
template <catches What = catches::hold, class Out>
void acquire_forever(const std::shared_ptr<LockCore>& core, thread_id owner, const lock_options& options, Out out) {
  if (core && options.wait()) {
    return deliver<Acquired>(core, std::move(out),
                             failure<Acquired>(make_error_code(errc::invalid_argument), core->message(wait_refused)));
  }
  acquire<What>(core, owner, std::nullopt, options.lease(), std::move(out), options.cancel());
}

void release(const std::shared_ptr<LockCore>& core, thread_id owner, sink<none> out);

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

// `wait_on`: the caller waits for the outcome at once, and may read its
// answer itself on that loop.
template <class T, class V = T, class Start>
std::future<T> as_future(const Start& start, detail::HostLoop* wait_on = nullptr) {
  Promised<T> promised;
  auto future = promised.future();
  // Only a promise hears the outcome: the operation may start on this thread.
  detail::EventLoop::CallerWaits in_place;
  start(promised.template sink_for<V>());
  if (wait_on != nullptr) lead_until_ready(*wait_on, future);
  return future;
}

// To a user's completion callback, guarded. A callable taking Outcome<V>
// (it converts to sink<V>). It keeps the client by address: it runs on the
// client's I/O thread, or on a caller's thread that holds the lock's core,
// so the client outlives every call of it.
template <class T, class V = T>
auto as_callback(const std::shared_ptr<LockCore>& core, completion<T> done) {
  // A moved-from handle has no client: its failure is only the callback's.
  LockHost* client = core ? &core->client() : nullptr;
  return [client, done = std::move(done)](Outcome<V> outcome) {
    if (outcome.error && client) client->log(log_level::debug, outcome.message);
    auto log = [client](log_level level, const std::string& text) {
      if (client) client->log(level, text);
    };
    if (!done) return;
    if constexpr (std::is_void_v<T>) {
      call_guarded(log, "a completion callback", done, outcome.error);
    } else {
      call_guarded(log, "a completion callback", done, outcome.error, std::move(outcome.value));
    }
  };
}

// The give-back of an AcquireFuture dropped before get(): never throws.
inline std::function<void()> abandon_of(std::shared_ptr<AcquireClaim> claim) {
  return [claim = std::move(claim)]() noexcept {
    try {
      claim->abandon();
    } catch (...) {
      // The release could not even be started (no memory): the hold stays
      // with the watchdog, as it would have without this guard.
    }
  };
}

// To an AcquireFuture, which releases the hold if nobody collects it.
// `start(out)` runs the acquire (try_acquire or acquire_forever) reporting
// to `out`; `value(acquired)` is the future's value (unused for void).
template <class T, class Start, class Value>
AcquireFuture<T> acquire_future(const std::shared_ptr<LockCore>& core, thread_id owner, const Start& start,
                                Value value) {
  auto claim = std::make_shared<AcquireClaim>([core, owner] {
    release(core, owner, [core](Outcome<none> outcome) {
      if (outcome.error) core->client().log(log_level::warning, outcome.message);
    });
  });
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  start([claim, promise, value](Outcome<Acquired> outcome) {
    claim->completed(!outcome.error && outcome.value.held);
    if (outcome.error) {
      return promise->set_exception(std::make_exception_ptr(Error(outcome.error, outcome.message)));
    }
    if constexpr (std::is_void_v<T>) {
      promise->set_value();
    } else {
      promise->set_value(value(outcome.value));
    }
  });
  return access::future<T>(std::move(future), abandon_of(std::move(claim)));
}

// The value of an acquire for ever: held, or an error.
template <class T, class Start>
T wait_blocking(const std::shared_ptr<LockCore>& core, std::string_view call, const Start& start) {
  LockCore& lock = live(core, call);
  check_blocking(lock, call);
  return as_future<T>(start, &lock.client().loop()).get();
}

}  // namespace warden::detail::calls
