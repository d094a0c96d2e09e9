// From the callback-based core to std::future: run an operation on the I/O
// thread and complete a promise from its callback.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <warden/error.hpp>

#include "client/client_core.hpp"
#include "lock/lock_core.hpp"

namespace warden::detail {

template <class T>
using promise_ptr = std::shared_ptr<std::promise<T>>;

template <class T>
void fail(const promise_ptr<T>& promise, std::error_code error, const std::string& message) {
  promise->set_exception(std::make_exception_ptr(Error(error, message)));
}

template <class T>
std::future<T> failed(errc error, const std::string& message) {
  std::promise<T> promise;
  promise.set_exception(std::make_exception_ptr(Error(error, message)));
  return promise.get_future();
}

// Runs op(lock, promise) on the I/O thread. After shutdown the future fails
// with errc::shut_down at once.
template <class T, class Op>
std::future<T> submit(const std::shared_ptr<LockCore>& core, Op op) {
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  bool queued = core->client().post_operation([core, promise, op = std::move(op)]() mutable { op(*core, promise); });
  if (!queued) fail(promise, make_error_code(errc::shut_down), core->message("the client is shut down"));
  return future;
}

// Inside the CallerWaits scope of a call that just started its operation:
// the caller may read the answer to `future` itself (EventLoop::lead_until).
template <class T>
void lead_until_ready(HostLoop& loop, const std::future<T>& future) {
  loop.lead_until([&future] { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
}

// A blocking call on the I/O thread would wait for the thread it blocks.
inline void check_blocking(const LockCore& lock, std::string_view call) {
  if (lock.client().loop().in_loop_thread()) {
    throw Error(errc::would_deadlock,
                lock.message(std::string(call) + " blocks, and was called on the client's I/O thread (inside a "
                                                 "callback); use the _async form there"));
  }
}

}  // namespace warden::detail
