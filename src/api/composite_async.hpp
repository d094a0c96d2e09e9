// The asynchronous forms MultiLock and RedLock share: AcquireFutures that give
// back a hold nobody collected, and completion callbacks, guarded.
#pragma once

#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include <warden/acquire_future.hpp>
#include <warden/lock.hpp>
#include <warden/lock_options.hpp>

#include "api/access.hpp"
#include "api/lock_calls.hpp"
#include "composite/composite_core.hpp"
#include "lock/acquire_claim.hpp"
#include "lock/lost_listeners.hpp"

namespace warden::detail {

// A moved-from MultiLock or RedLock handle has no core: its calls fail with
// errc::invalid_argument, at once and on the calling thread.
inline Error moved_from_error() {
  return Error(errc::invalid_argument, "warden: called on a moved-from MultiLock or RedLock handle");
}

inline CompositeCore& live(const std::shared_ptr<CompositeCore>& core) {
  if (!core) throw moved_from_error();
  return *core;
}

// The shared state of each member handle (null for an empty handle: the
// policies' factories refuse it).
inline std::vector<std::shared_ptr<LockCore>> member_cores(const std::vector<Lock>& members) {
  std::vector<std::shared_ptr<LockCore>> cores;
  cores.reserve(members.size());
  for (auto& lock : members) cores.push_back(access::core(lock));
  return cores;
}

template <class T>
std::future<T> moved_from() {
  std::promise<T> promise;
  promise.set_exception(std::make_exception_ptr(moved_from_error()));
  return promise.get_future();
}

// The lock forms wait for ever: a wait in their options is a mistake.
inline Error wait_refused_error(const CompositeCore& core) {
  return Error(errc::invalid_argument, core.message(calls::wait_refused));
}

inline void refuse_wait(const CompositeCore& core, const lock_options& options) {
  if (options.wait()) throw wait_refused_error(core);
}

template <class T>
AcquireFuture<T> refused_future(const CompositeCore& core) {
  std::promise<T> promise;
  promise.set_exception(std::make_exception_ptr(wait_refused_error(core)));
  return access::future<T>(promise.get_future(), nullptr);
}

// The outcome of a try_lock form for a caller that waits for it (and so
// collects any hold it takes).
inline std::future<bool> try_acquire_future(CompositeCore& core, thread_id owner, const lock_options& options) {
  auto promise = std::make_shared<std::promise<bool>>();
  auto future = promise->get_future();
  core.try_acquire(
      owner, options.wait().value_or(std::chrono::milliseconds{0}), options.lease(),
      [promise](std::optional<Error> error, bool acquired) {
        if (error) return promise->set_exception(std::make_exception_ptr(*error));
        promise->set_value(acquired);
      },
      options.cancel());
  return future;
}

// T = void: the acquire waits for ever (held or an error); T = bool: false on time-out.
template <class T>
AcquireFuture<T> composite_acquire(const std::shared_ptr<CompositeCore>& core, thread_id owner,
                                   std::optional<std::chrono::milliseconds> wait,
                                   std::optional<std::chrono::milliseconds> lease, cancel_token cancel = {}) {
  if (!core) return access::future<T>(moved_from<T>(), nullptr);
  auto claim = std::make_shared<AcquireClaim>([core, owner] {
    core->release(owner, [core](std::optional<Error> error) {
      if (error) core->log(log_level::warning, error->what());
    });
  });
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  core->try_acquire(
      owner, wait, lease,
      [claim, promise](std::optional<Error> error, bool acquired) {
        claim->completed(!error && acquired);
        if (error) return promise->set_exception(std::make_exception_ptr(*error));
        if constexpr (std::is_void_v<T>) {
          promise->set_value();
        } else {
          promise->set_value(acquired);
        }
      },
      std::move(cancel));
  return access::future<T>(std::move(future), calls::abandon_of(std::move(claim)));
}

// A user's completion<T> (T = void or bool) as the core's callback.
template <class T>
CompositeCore::acquire_done composite_callback(const std::shared_ptr<CompositeCore>& core, completion<T> done) {
  return [core, done = std::move(done)](std::optional<Error> error, bool value) {
    if (error) core->log(log_level::debug, error->what());
    if (!done) return;
    auto log = [core](log_level level, const std::string& text) { core->log(level, text); };
    std::error_code code = error ? error->code() : std::error_code{};
    if constexpr (std::is_void_v<T>) {
      (void)value;
      call_guarded(log, "a completion callback", done, code);
    } else {
      call_guarded(log, "a completion callback", done, code, !error && value);
    }
  };
}

inline CompositeCore::release_done composite_release_callback(const std::shared_ptr<CompositeCore>& core,
                                                              completion<void> done) {
  auto inner = composite_callback<void>(core, std::move(done));
  return [inner](std::optional<Error> error) { inner(std::move(error), false); };
}

}  // namespace warden::detail
