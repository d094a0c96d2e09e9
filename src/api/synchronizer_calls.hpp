// What the synchronizer handles (Semaphore, PermitExpirableSemaphore)
// share: running an operation on the I/O thread and delivering its outcome
// to a future, a completion callback or a waiting caller. `Core` is the
// handle's core: it has client() and message(). Internal to src/api.
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

#include <warden/error.hpp>
#include <warden/lock.hpp>

#include "io/event_loop.hpp"
#include "lock/lock_host.hpp"
#include "lock/lost_listeners.hpp"

namespace warden::detail::sync_calls {

template <class T>
struct Outcome {
  std::error_code error;
  std::string message;
  T value{};
};
template <class T>
using sink = std::function<void(Outcome<T>)>;

inline std::string moved_from(std::string_view call) {
  return fmt::format("warden: {} called on a moved-from handle", call);
}

inline std::optional<std::string> permits_problem(std::int64_t permits) {
  if (permits <= 0) return fmt::format("the number of permits must be positive, got {}", permits);
  return std::nullopt;
}

// Delivers `outcome` on the I/O thread; on the calling thread when the
// client is shut down (its I/O thread is gone).
template <class T, class Core>
void deliver(const std::shared_ptr<Core>& core, sink<T> out, Outcome<T> outcome) {
  auto task = [out, outcome]() mutable { out(std::move(outcome)); };
  if (!core->client().post(task)) task();
}

// Checks the handle and the count, then runs op(core, out) on the I/O thread.
template <class T, class Core, class Op>
void submit(const std::shared_ptr<Core>& core, std::string_view call, std::int64_t permits, Op op, sink<T> out) {
  if (!core) return out(Outcome<T>{make_error_code(errc::invalid_argument), moved_from(call), T{}});
  if (auto problem = permits_problem(permits)) {
    return deliver<T>(core, std::move(out),
                      Outcome<T>{make_error_code(errc::invalid_argument),
                                 core->message(fmt::format("{}: {}; nothing was changed", call, *problem)), T{}});
  }
  bool queued = core->client().post_operation([core, op = std::move(op), out]() mutable { op(*core, std::move(out)); });
  if (!queued) out(Outcome<T>{make_error_code(errc::shut_down), core->message("the client is shut down"), T{}});
}

// ---- where outcomes go ----

template <class T, class V, class Convert>
sink<V> to_promise(std::shared_ptr<std::promise<T>> promise, Convert convert) {
  return [promise = std::move(promise), convert](Outcome<V> outcome) {
    if (outcome.error) return promise->set_exception(std::make_exception_ptr(Error(outcome.error, outcome.message)));
    if constexpr (std::is_void_v<T>) {
      promise->set_value();
    } else {
      promise->set_value(convert(outcome.value));
    }
  };
}

template <class T, class V, class Convert, class Start>
std::future<T> as_future(const Start& start, Convert convert) {
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  // Only a promise hears the outcome: the operation may start on this thread.
  detail::EventLoop::CallerWaits in_place;
  start(to_promise<T, V>(promise, convert));
  return future;
}

// A blocking call: refused on the I/O thread; the caller may read its own
// answer (EventLoop::lead_until).
template <class T, class V, class Core, class Convert, class Start>
T blocking(const std::shared_ptr<Core>& core, std::string_view call, const Start& start, Convert convert) {
  if (!core) throw Error(errc::invalid_argument, moved_from(call));
  auto& loop = core->client().loop();
  if (loop.in_loop_thread()) {
    throw Error(errc::would_deadlock,
                core->message(fmt::format("{} blocks, and was called on the client's I/O thread (inside a callback); "
                                          "use the _async form there",
                                          call)));
  }
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  {
    detail::EventLoop::CallerWaits in_place;
    start(to_promise<T, V>(promise, convert));
    loop.lead_until([&future] { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
  }
  return future.get();
}

template <class T, class V, class Core, class Convert>
sink<V> to_callback(const std::shared_ptr<Core>& core, completion<T> done, Convert convert) {
  detail::LockHost* client = core ? &core->client() : nullptr;
  return [client, done = std::move(done), convert](Outcome<V> outcome) {
    if (outcome.error && client) client->log(log_level::debug, outcome.message);
    auto log = [client](log_level level, const std::string& text) {
      if (client) client->log(level, text);
    };
    if (!done) return;
    if constexpr (std::is_void_v<T>) {
      detail::call_guarded(log, "a completion callback", done, outcome.error);
    } else {
      detail::call_guarded(log, "a completion callback", done, outcome.error, convert(outcome.value));
    }
  };
}

}  // namespace warden::detail::sync_calls
