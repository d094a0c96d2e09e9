// warden — distributed locks on Redis.
// A C++20 awaitable for the asynchronous calls, without Asio: the coroutine
// is resumed through an executor the caller supplies (a function that posts).
#pragma once

#if __cplusplus < 202002L
#error "<warden/coro.hpp> needs C++20 (coroutines); warden's other headers are C++17"
#endif

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <warden/cancel.hpp>
#include <warden/composite_lock.hpp>
#include <warden/count_down_latch.hpp>
#include <warden/error.hpp>
#include <warden/fenced_lock.hpp>
#include <warden/lock.hpp>
#include <warden/lock_options.hpp>
#include <warden/permit_expirable_semaphore.hpp>
#include <warden/semaphore.hpp>
#include <warden/task_owner.hpp>
#include <warden/thread_id.hpp>

namespace warden::coro {

/// \brief Where a coroutine resumes: a function that runs the function it is
/// given later, on a thread of the caller's choosing (a thread pool's post, an
/// event loop's queue). It must not run it inline: it is called on the
/// Client's I/O thread, and code resumed there would delay every lock's
/// renewals and replies (see docs/asio.md). A function it drops without
/// running leaves the coroutine suspended for good; a hold the coroutine
/// would have received is then given back.
using executor = std::function<void(std::function<void()>)>;

namespace detail {

template <class T>
struct outcome {
  std::error_code error;
  T value{};
};
template <>
struct outcome<void> {
  std::error_code error;
};

inline bool is_hold(const outcome<void>& done) noexcept { return !done.error; }
inline bool is_hold(const outcome<bool>& done) noexcept { return !done.error && done.value; }
template <class U>
bool is_hold(const outcome<std::optional<U>>& done) noexcept {
  return !done.error && done.value.has_value();
}
template <class U>
bool is_hold(const outcome<U>& done) noexcept {
  return !done.error;
}

// What the warden callback and the posted resumption share (the awaitable
// keeps no reference): destroyed without having resumed the coroutine (the
// executor dropped the resumption), it gives back a hold nobody will receive.
template <class T>
struct resumption {
  std::coroutine_handle<> waiting;
  outcome<T>* sink = nullptr;  // in the suspended coroutine's awaitable
  outcome<T> done;
  std::function<void(completion<void>)> give_back;
  bool resumed = false;

  ~resumption() {
    if (!resumed && give_back && is_hold(done)) give_back([](std::error_code) {});
  }
};

}  // namespace detail

/// \brief The awaitable of one asynchronous warden call: `co_await` starts
/// the call, suspends, and resumes through the executor with its value, or
/// throws warden::Error with its error.
///
/// Made by the functions below (lock, try_lock, unlock, ...) or by call() for
/// any call of the same callback shape. Await it once.
/// \tparam T what the call reports: void, bool, a fencing token, an optional token.
template <class T>
class [[nodiscard]] awaitable {
 public:
  /// \param post where to resume (see executor).
  /// \param start begins the warden call with the callback it is given.
  /// \param give_back releases a hold nobody will receive (empty for calls
  ///   that take no hold).
  awaitable(executor post, std::function<void(completion<T>)> start,
            std::function<void(completion<void>)> give_back = {})
      : post_(std::move(post)), start_(std::move(start)), give_back_(std::move(give_back)) {}

  /// \return false: the call always suspends (its reply comes from Redis).
  bool await_ready() const noexcept { return false; }

  /// Starts the call; the coroutine resumes through the executor.
  /// \param waiting the suspended coroutine.
  void await_suspend(std::coroutine_handle<> waiting) {
    auto shared = std::make_shared<detail::resumption<T>>();
    shared->waiting = waiting;
    shared->sink = &done_;
    shared->give_back = std::move(give_back_);
    auto resume = [post = post_, shared](detail::outcome<T> done) {
      shared->done = std::move(done);
      post([shared] {
        *shared->sink = std::move(shared->done);
        shared->resumed = true;
        shared->waiting.resume();
      });
    };
    if constexpr (std::is_void_v<T>) {
      start_([resume](std::error_code error) { resume(detail::outcome<void>{error}); });
    } else {
      start_([resume](std::error_code error, T value) { resume(detail::outcome<T>{error, std::move(value)}); });
    }
  }

  /// \return the call's value (nothing for void).
  /// \throws warden::Error with the call's error.
  T await_resume() {
    if (done_.error) throw Error(done_.error, done_.error.message());
    if constexpr (!std::is_void_v<T>) return std::move(done_.value);
  }

 private:
  executor post_;
  std::function<void(completion<T>)> start_;
  std::function<void(completion<void>)> give_back_;
  detail::outcome<T> done_;
};

/// The awaitable of any waiting warden call (an acquire): start(callback)
/// begins it, give_back(callback) releases a hold nobody will receive. The
/// way to add a kind with the same callback shape.
/// \tparam T what the call reports.
/// \param post where to resume. \param start begins the call. \param give_back releases the hold.
/// \return the awaitable.
template <class T>
awaitable<T> wait(executor post, std::function<void(completion<T>)> start,
                  std::function<void(completion<void>)> give_back) {
  return awaitable<T>(std::move(post), std::move(start), std::move(give_back));
}

/// The awaitable of any warden call that takes no hold (a release, a query).
/// \tparam T what the call reports.
/// \param post where to resume. \param start begins the call.
/// \return the awaitable.
template <class T>
awaitable<T> call(executor post, std::function<void(completion<T>)> start) {
  return awaitable<T>(std::move(post), std::move(start));
}

/// BasicLock::lock() for `owner`, awaited.
/// \param lock any single-name lock. \param owner who will hold it (a task_owner or thread_id).
/// \param post where to resume. \param options lease and cancellation (no wait).
/// \return the awaitable (void).
inline awaitable<void> lock(BasicLock lock, thread_id owner, executor post, lock_options options = {}) {
  return wait<void>(
      std::move(post),
      [lock, owner, options](completion<void> done) mutable { lock.lock_async(owner, options, std::move(done)); },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// BasicLock::try_lock() for `owner`, awaited.
/// \param lock any single-name lock. \param owner who will hold it.
/// \param post where to resume. \param options wait, lease and cancellation.
/// \return the awaitable: true when held, false on time-out.
inline awaitable<bool> try_lock(BasicLock lock, thread_id owner, executor post, lock_options options = {}) {
  return wait<bool>(
      std::move(post),
      [lock, owner, options](completion<bool> done) mutable { lock.try_lock_async(owner, options, std::move(done)); },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// Releases one hold of `owner`, awaited; throws warden::Error as
/// unlock_checked() would return it (errc::not_owner for another owner).
/// \param lock any single-name lock. \param owner the holder. \param post where to resume.
/// \return the awaitable (void).
inline awaitable<void> unlock(BasicLock lock, thread_id owner, executor post) {
  return call<void>(std::move(post),
                    [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// FencedLock::lock_and_get_token() for `owner`, awaited.
/// \param lock the fenced lock. \param owner who will hold it.
/// \param post where to resume. \param options lease and cancellation.
/// \return the awaitable: the fencing token.
inline awaitable<FencedLock::token_type> lock_and_get_token(FencedLock lock, thread_id owner, executor post,
                                                            lock_options options = {}) {
  return wait<FencedLock::token_type>(
      std::move(post),
      [lock, owner, options](completion<FencedLock::token_type> done) mutable {
        lock.lock_and_get_token_async(owner, options, std::move(done));
      },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// FencedLock::try_lock_and_get_token() for `owner`, awaited.
/// \param lock the fenced lock. \param owner who will hold it.
/// \param post where to resume. \param options wait, lease and cancellation.
/// \return the awaitable: the token, or empty on time-out.
inline awaitable<std::optional<FencedLock::token_type>> try_lock_and_get_token(FencedLock lock, thread_id owner,
                                                                               executor post,
                                                                               lock_options options = {}) {
  return wait<std::optional<FencedLock::token_type>>(
      std::move(post),
      [lock, owner, options](completion<std::optional<FencedLock::token_type>> done) mutable {
        lock.try_lock_and_get_token_async(owner, options, std::move(done));
      },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// CompositeLock::lock() (MultiLock, RedLock) for `owner`, awaited.
/// \param lock the composite lock. \param owner who will hold it.
/// \param post where to resume. \param options lease and cancellation.
/// \return the awaitable (void).
inline awaitable<void> lock(CompositeLock lock, thread_id owner, executor post, lock_options options = {}) {
  return wait<void>(
      std::move(post),
      [lock, owner, options](completion<void> done) mutable { lock.lock_async(owner, options, std::move(done)); },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// CompositeLock::try_lock() for `owner`, awaited.
/// \param lock the composite lock. \param owner who will hold it.
/// \param post where to resume. \param options wait, lease and cancellation.
/// \return the awaitable: true when held.
inline awaitable<bool> try_lock(CompositeLock lock, thread_id owner, executor post, lock_options options = {}) {
  return wait<bool>(
      std::move(post),
      [lock, owner, options](completion<bool> done) mutable { lock.try_lock_async(owner, options, std::move(done)); },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// CompositeLock::unlock() of `owner`'s hold, awaited.
/// \param lock the composite lock. \param owner the holder. \param post where to resume.
/// \return the awaitable (void).
inline awaitable<void> unlock(CompositeLock lock, thread_id owner, executor post) {
  return call<void>(std::move(post),
                    [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); });
}

/// Semaphore::acquire() of `permits`, awaited. Permits taken for a coroutine
/// that is never resumed (its executor dropped the job) are released.
/// \param semaphore the semaphore. \param permits how many, > 0.
/// \param post where to resume. \param options cancellation (no wait, no lease).
/// \return the awaitable (void).
inline awaitable<void> acquire(Semaphore semaphore, std::int64_t permits, executor post, lock_options options = {}) {
  return wait<void>(
      std::move(post),
      [semaphore, permits, options](completion<void> done) mutable {
        semaphore.acquire_async(permits, options, std::move(done));
      },
      [semaphore, permits](completion<void> done) mutable { semaphore.release_async(permits, std::move(done)); });
}

/// Semaphore::try_acquire(permits, options), awaited.
/// \param semaphore the semaphore. \param permits how many, > 0.
/// \param post where to resume. \param options wait (unset: one try) and cancellation.
/// \return the awaitable: true when taken, false when the wait ran out.
inline awaitable<bool> try_acquire(Semaphore semaphore, std::int64_t permits, executor post,
                                   lock_options options = {}) {
  return wait<bool>(
      std::move(post),
      [semaphore, permits, options](completion<bool> done) mutable {
        semaphore.try_acquire_async(permits, options, std::move(done));
      },
      [semaphore, permits](completion<void> done) mutable { semaphore.release_async(permits, std::move(done)); });
}

/// Semaphore::release() of `permits`, awaited.
/// \param semaphore the semaphore. \param permits how many, > 0. \param post where to resume.
/// \return the awaitable (void).
inline awaitable<void> release(Semaphore semaphore, std::int64_t permits, executor post) {
  return call<void>(std::move(post), [semaphore, permits](completion<void> done) mutable {
    semaphore.release_async(permits, std::move(done));
  });
}

/// Semaphore::release_if_exists() of `permits`, awaited: false when the
/// semaphore's key does not exist.
/// \param semaphore the semaphore. \param permits how many, > 0. \param post where to resume.
/// \return the awaitable (bool).
inline awaitable<bool> release_if_exists(Semaphore semaphore, std::int64_t permits, executor post) {
  return call<bool>(std::move(post), [semaphore, permits](completion<bool> done) mutable {
    semaphore.release_if_exists_async(permits, std::move(done));
  });
}

/// PermitExpirableSemaphore::acquire(options), awaited. A permit taken for a
/// coroutine that is never resumed is released.
/// \param semaphore the semaphore. \param post where to resume.
/// \param options lease (unset: watchdog-kept) and cancellation; no wait.
/// \return the awaitable: the permit's id.
inline awaitable<std::string> acquire(PermitExpirableSemaphore semaphore, executor post, lock_options options = {}) {
  // The give-back needs the id: the acquire's callback keeps it first.
  auto taken = std::make_shared<std::string>();
  return wait<std::string>(
      std::move(post),
      [semaphore, options, taken](completion<std::string> done) mutable {
        semaphore.acquire_async(options, [taken, done = std::move(done)](std::error_code error, std::string id) {
          if (!error) *taken = id;
          done(error, std::move(id));
        });
      },
      [semaphore, taken](completion<void> done) mutable { semaphore.release_async(*taken, std::move(done)); });
}

/// PermitExpirableSemaphore::try_acquire(options), awaited.
/// \param semaphore the semaphore. \param post where to resume.
/// \param options wait (unset: one try), lease and cancellation.
/// \return the awaitable: the permit's id, or empty when the wait ran out.
inline awaitable<std::optional<std::string>> try_acquire(PermitExpirableSemaphore semaphore, executor post,
                                                         lock_options options = {}) {
  auto taken = std::make_shared<std::string>();
  return wait<std::optional<std::string>>(
      std::move(post),
      [semaphore, options, taken](completion<std::optional<std::string>> done) mutable {
        semaphore.try_acquire_async(
            options, [taken, done = std::move(done)](std::error_code error, std::optional<std::string> id) {
              if (!error && id) *taken = *id;
              done(error, std::move(id));
            });
      },
      [semaphore, taken](completion<void> done) mutable { semaphore.release_async(*taken, std::move(done)); });
}

/// PermitExpirableSemaphore::release(id), awaited; throws warden::Error
/// (errc::lease_expired, errc::not_owner) as release() does.
/// \param semaphore the semaphore. \param id the permit's id. \param post where to resume.
/// \return the awaitable (void).
inline awaitable<void> release(PermitExpirableSemaphore semaphore, std::string id, executor post) {
  return call<void>(std::move(post), [semaphore, id = std::move(id)](completion<void> done) mutable {
    semaphore.release_async(id, std::move(done));
  });
}

/// PermitExpirableSemaphore::try_release(id), awaited.
/// \param semaphore the semaphore. \param id the permit's id. \param post where to resume.
/// \return the awaitable: false when the permit was not held.
inline awaitable<bool> try_release(PermitExpirableSemaphore semaphore, std::string id, executor post) {
  return call<bool>(std::move(post), [semaphore, id = std::move(id)](completion<bool> done) mutable {
    semaphore.try_release_async(id, std::move(done));
  });
}

/// CountDownLatch::wait(), awaited: resumes once the latch is open. It takes
/// nothing, so there is nothing to give back.
/// \param latch the latch. \param post where to resume. \param cancel ends the wait with errc::cancelled.
/// \return the awaitable (void).
inline awaitable<void> wait(CountDownLatch latch, executor post, cancel_token cancel = {}) {
  return call<void>(std::move(post),
                    [latch, cancel](completion<void> done) mutable { latch.wait_async(cancel, std::move(done)); });
}

/// CountDownLatch::wait_for(), awaited.
/// \param latch the latch. \param limit how long to wait at most, >= 0. \param post where to resume.
/// \param cancel ends the wait with errc::cancelled.
/// \return the awaitable: true when the latch opened in time.
inline awaitable<bool> wait_for(CountDownLatch latch, std::chrono::milliseconds limit, executor post,
                                cancel_token cancel = {}) {
  return call<bool>(std::move(post), [latch, limit, cancel](completion<bool> done) mutable {
    latch.wait_for_async(limit, cancel, std::move(done));
  });
}

/// CountDownLatch::count_down(), awaited.
/// \param latch the latch. \param post where to resume.
/// \return the awaitable (void).
inline awaitable<void> count_down(CountDownLatch latch, executor post) {
  return call<void>(std::move(post),
                    [latch](completion<void> done) mutable { latch.count_down_async(std::move(done)); });
}

}  // namespace warden::coro
