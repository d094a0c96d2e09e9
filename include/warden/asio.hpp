// warden — distributed locks on Redis.
// Asio completion tokens for every lock kind and synchronizer: callbacks,
// use_future, use_awaitable, deferred. Optional and header-only: warden itself neither
// needs nor links Asio. Standalone Asio by default; Boost.Asio when
// WARDEN_ASIO_USE_BOOST is defined before this header is included.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#if defined(WARDEN_ASIO_USE_BOOST)
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/version.hpp>
#include <boost/system/error_code.hpp>
#if BOOST_ASIO_VERSION >= 101900
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#define WARDEN_ASIO_HAS_CANCELLATION_SLOT 1
#endif
#else
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/error_code.hpp>
#include <asio/execution.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/system_executor.hpp>
#include <asio/version.hpp>
#if ASIO_VERSION >= 101900
#include <asio/associated_cancellation_slot.hpp>
#include <asio/cancellation_type.hpp>
#define WARDEN_ASIO_HAS_CANCELLATION_SLOT 1
#endif
#endif

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

namespace warden {
namespace detail::asio_bridge {

#if defined(WARDEN_ASIO_USE_BOOST)
namespace net = ::boost::asio;
using net_error = ::boost::system::error_code;

// Boost.System before 1.77 cannot hold a std::error_category: warden's codes
// travel in this category, which answers with warden's names and texts.
class boost_category final : public ::boost::system::error_category {
 public:
  const char* name() const noexcept override { return warden::error_category().name(); }
  std::string message(int value) const override { return warden::error_category().message(value); }
};
inline const ::boost::system::error_category& warden_boost_category() noexcept {
  static const boost_category category;
  return category;
}
inline net_error to_net(const std::error_code& error) noexcept {
  if (!error) return {};
  if (error.category() == warden::error_category()) return {error.value(), warden_boost_category()};
  if (error.category() == std::generic_category()) return {error.value(), ::boost::system::generic_category()};
  return {error.value(), ::boost::system::system_category()};
}
#else
namespace net = ::asio;
using net_error = ::asio::error_code;
inline net_error to_net(const std::error_code& error) noexcept { return error; }
#endif

// The completion signature of a warden call reporting a T.
template <class T>
struct signature {
  using type = void(net_error, T);
};
template <>
struct signature<void> {
  using type = void(net_error);
};

// What a warden callback reported; the value is value-initialised on error.
template <class T>
struct outcome {
  std::error_code error;
  T value{};
};
template <>
struct outcome<void> {
  std::error_code error;
};

// Whether an acquire's outcome is a hold (which must reach the handler, or
// be given back). A waiting call reports a hold as: no error (void, tokens,
// ids), true, or an engaged optional.
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

// The link from an operation's Asio cancellation slot to the warden
// cancel_source of its wait. phase decides, once, whether cancellation or
// the outcome came first: a hold taken after cancellation won is given back.
struct cancel_link {
  enum : int { pending, cancelled, finished };
  cancel_source source;
  std::atomic<int> phase{pending};

  void request() noexcept {
    int expected = pending;
    if (phase.compare_exchange_strong(expected, cancelled)) source.cancel();
  }
  // Returns false when cancellation came first.
  bool finish() noexcept {
    int expected = pending;
    return phase.compare_exchange_strong(expected, finished) || expected == finished;
  }
};

#if defined(WARDEN_ASIO_HAS_CANCELLATION_SLOT)
// Installed in the handler's cancellation slot. Every type (terminal,
// partial, total) cancels the wait: a cancelled wait holds nothing, so it
// meets the strongest guarantee.
struct slot_handler {
  std::shared_ptr<cancel_link> link;
  void operator()(net::cancellation_type_t type) const noexcept {
    if ((type & (net::cancellation_type::terminal | net::cancellation_type::partial | net::cancellation_type::total)) !=
        net::cancellation_type::none) {
      link->request();
    }
  }
};
#endif

// One asynchronous warden call adapted to an Asio handler. Owned by shared
// pointers: the warden callback's and, once the outcome is known, the
// function posted to the handler's executor. Should that function be
// destroyed without running (its executor shut down), the destructor gives a
// hold back rather than leave it renewed for ever.
template <class T, class Handler>
class operation : public std::enable_shared_from_this<operation<T, Handler>> {
 public:
  using executor_type = net::associated_executor_t<Handler, net::system_executor>;
  using work_type = std::decay_t<decltype(net::prefer(std::declval<const executor_type&>(),
                                                      net::execution::outstanding_work.tracked))>;

  operation(Handler handler, std::function<void(completion<void>)> give_back)
      : work_(net::prefer(net::get_associated_executor(handler, net::system_executor()),
                          net::execution::outstanding_work.tracked)),
        handler_(std::move(handler)),
        give_back_(std::move(give_back)) {}

  operation(const operation&) = delete;
  operation& operator=(const operation&) = delete;

  ~operation() {
    if (holds_ && give_back_) give_back_([](std::error_code) {});
  }

  // For a waiting call: links the handler's cancellation slot (when it has
  // one) to a fresh cancel_source, whose token replaces the options' own.
  lock_options link_cancellation(lock_options options) {
#if defined(WARDEN_ASIO_HAS_CANCELLATION_SLOT)
    slot_ = net::get_associated_cancellation_slot(handler_);
    if (slot_.is_connected()) {
      link_ = std::make_shared<cancel_link>();
      slot_.template emplace<slot_handler>(slot_handler{link_});
      options.with_cancel(link_->source.token());
    }
#endif
    return options;
  }

  // The warden callback: runs on the Client's I/O thread, so it only decides
  // and posts.
  completion<T> callback() {
    auto self = this->shared_from_this();
    if constexpr (std::is_void_v<T>) {
      return [self](std::error_code error) { self->on_outcome(outcome<void>{error}); };
    } else {
      return [self](std::error_code error, T value) { self->on_outcome(outcome<T>{error, std::move(value)}); };
    }
  }

 private:
  void on_outcome(outcome<T> done) {
    done_ = std::move(done);
    if (give_back_ && is_hold(done_)) {
      if (link_ && !link_->finish()) {
        // Cancelled first, taken anyway: give it back, report the cancellation.
        auto self = this->shared_from_this();
        give_back_([self](std::error_code) {
          self->done_ = outcome<T>{make_error_code(errc::cancelled)};
          self->post();
        });
        return;
      }
      holds_ = true;
    } else if (link_) {
      link_->finish();
    }
    post();
  }

  void post() {
    net::post(work_, [self = this->shared_from_this()]() { self->complete(); });
  }

  // On the handler's executor.
  void complete() {
#if defined(WARDEN_ASIO_HAS_CANCELLATION_SLOT)
    if (link_) slot_.clear();
#endif
    holds_ = false;
    Handler handler(std::move(handler_));
    outcome<T> done(std::move(done_));
    if constexpr (std::is_void_v<T>) {
      std::move(handler)(to_net(done.error));
    } else {
      std::move(handler)(to_net(done.error), std::move(done.value));
    }
  }

  work_type work_;
  Handler handler_;
  std::function<void(completion<void>)> give_back_;  // empty for calls that take no hold
  std::shared_ptr<cancel_link> link_;
#if defined(WARDEN_ASIO_HAS_CANCELLATION_SLOT)
  net::cancellation_slot slot_;
#endif
  outcome<T> done_;
  bool holds_ = false;  // done_ is a hold the handler has not received yet
};

struct initiate_wait {
  template <class Handler, class Start, class GiveBack, class T>
  void operator()(Handler&& handler, Start start, GiveBack give_back, lock_options options,
                  std::in_place_type_t<T>) const {
    auto op =
        std::make_shared<operation<T, std::decay_t<Handler>>>(std::forward<Handler>(handler), std::move(give_back));
    start(op->link_cancellation(std::move(options)), op->callback());
  }
};

struct initiate_call {
  template <class Handler, class Start, class T>
  void operator()(Handler&& handler, Start start, std::in_place_type_t<T>) const {
    auto op = std::make_shared<operation<T, std::decay_t<Handler>>>(std::forward<Handler>(handler), nullptr);
    start(op->callback());
  }
};

}  // namespace detail::asio_bridge

/// \brief Adapts a waiting warden call (an acquire) to any Asio completion token.
///
/// This is the one function every waiting operation below is made of, and
/// the way to add another kind with the same callback shape:
/// \code
///   template <class Token>
///   auto async_acquire_two(Semaphore sem, lock_options options, Token&& token) {
///     return warden::async_wait<void>(
///         [sem](const lock_options& o, completion<void> done) mutable { sem.acquire_async(2, o, std::move(done)); },
///         [sem](completion<void> done) mutable { sem.release_async(2, std::move(done)); },
///         std::move(options), std::forward<Token>(token));
///   }
/// \endcode
/// The completion signature is void(error_code) for T = void, else
/// void(error_code, T); the error is warden's (errc) in the Asio convention.
/// The completion runs on the handler's associated executor (through post;
/// asio::system_executor when it has none), never on the Client's I/O
/// thread. A connected cancellation slot (terminal, partial or total) cancels
/// the wait through a cancel_source whose token replaces the options' own;
/// a hold the wait took although cancellation came first is given back and
/// errc::cancelled reported, so a cancelled wait leaves nothing behind.
/// \tparam T the value the warden callback reports (void, bool, a token, an optional).
/// \param start called once as start(options, callback) to begin the warden call.
/// \param give_back called as give_back(callback) to release a hold nobody will
///   receive (taken after cancellation, or its executor gone).
/// \param options wait, lease and cancellation, as for the blocking call.
/// \param token any completion token.
/// \return what the token makes of the signature (nothing, a future, an awaitable, ...).
template <class T, class Start, class GiveBack, class Token>
auto async_wait(Start start, GiveBack give_back, lock_options options, Token&& token) {
  namespace bridge = detail::asio_bridge;
  return bridge::net::async_initiate<Token, typename bridge::signature<T>::type>(
      bridge::initiate_wait{}, token, std::move(start), std::function<void(completion<void>)>(std::move(give_back)),
      std::move(options), std::in_place_type<T>);
}

/// \brief Adapts a warden call that does not wait (a release) to any Asio
/// completion token: start(callback) begins it. The completion runs on the
/// handler's associated executor, as for async_wait(); there is no
/// cancellation (a release is not a wait).
/// \tparam T the value the warden callback reports (void for a release).
/// \param start called once as start(callback) to begin the warden call.
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class T, class Start, class Token>
auto async_call(Start start, Token&& token) {
  namespace bridge = detail::asio_bridge;
  return bridge::net::async_initiate<Token, typename bridge::signature<T>::type>(
      bridge::initiate_call{}, token, std::move(start), std::in_place_type<T>);
}

// ---- Lock, FairLock, SpinLock, a ReadWriteLock's read_lock()/write_lock(), FencedLock

/// lock() for `owner` with any completion token: void(error_code). See async_wait().
/// \param lock the lock (any single-name kind).
/// \param owner who will hold it: a task_owner, or any thread_id.
/// \param options lease and cancellation, as for lock() (no wait).
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_lock(BasicLock lock, thread_id owner, lock_options options, Token&& token) {
  return async_wait<void>([lock, owner](const lock_options& o,
                                        completion<void> done) mutable { lock.lock_async(owner, o, std::move(done)); },
                          [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); },
                          std::move(options), std::forward<Token>(token));
}
/// async_lock() with default options (watchdog-renewed, no wait limit).
/// \param lock the lock. \param owner who will hold it. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_lock(BasicLock lock, thread_id owner, Token&& token) {
  return async_lock(lock, owner, lock_options(), std::forward<Token>(token));
}

/// try_lock(options) for `owner` with any completion token:
/// void(error_code, bool), true when held, false on time-out. See async_wait().
/// \param lock the lock. \param owner who will hold it.
/// \param options wait, lease and cancellation, as for try_lock().
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_lock(BasicLock lock, thread_id owner, lock_options options, Token&& token) {
  return async_wait<bool>(
      [lock, owner](const lock_options& o, completion<bool> done) mutable {
        lock.try_lock_async(owner, o, std::move(done));
      },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); }, std::move(options),
      std::forward<Token>(token));
}

/// Releases one hold of `owner` with any completion token: void(error_code),
/// the error as unlock_checked() returns it (errc::not_owner for an owner
/// that holds nothing). See async_call().
/// \param lock the lock. \param owner the holder. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_unlock(BasicLock lock, thread_id owner, Token&& token) {
  return async_call<void>([lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); },
                          std::forward<Token>(token));
}

/// FencedLock::lock_and_get_token() for `owner` with any completion token:
/// void(error_code, FencedLock::token_type). See async_wait().
/// \param lock the fenced lock. \param owner who will hold it.
/// \param options lease and cancellation (no wait). \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_lock_and_get_token(FencedLock lock, thread_id owner, lock_options options, Token&& token) {
  return async_wait<FencedLock::token_type>(
      [lock, owner](const lock_options& o, completion<FencedLock::token_type> done) mutable {
        lock.lock_and_get_token_async(owner, o, std::move(done));
      },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); }, std::move(options),
      std::forward<Token>(token));
}

/// FencedLock::try_lock_and_get_token() for `owner` with any completion
/// token: void(error_code, std::optional<FencedLock::token_type>), empty on
/// time-out. See async_wait().
/// \param lock the fenced lock. \param owner who will hold it.
/// \param options wait, lease and cancellation. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_lock_and_get_token(FencedLock lock, thread_id owner, lock_options options, Token&& token) {
  return async_wait<std::optional<FencedLock::token_type>>(
      [lock, owner](const lock_options& o, completion<std::optional<FencedLock::token_type>> done) mutable {
        lock.try_lock_and_get_token_async(owner, o, std::move(done));
      },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); }, std::move(options),
      std::forward<Token>(token));
}

// ---- MultiLock, RedLock

/// CompositeLock::lock() for `owner` with any completion token: void(error_code).
/// \param lock the MultiLock or RedLock. \param owner who will hold it.
/// \param options lease and cancellation (no wait). \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_lock(CompositeLock lock, thread_id owner, lock_options options, Token&& token) {
  return async_wait<void>([lock, owner](const lock_options& o,
                                        completion<void> done) mutable { lock.lock_async(owner, o, std::move(done)); },
                          [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); },
                          std::move(options), std::forward<Token>(token));
}
/// async_lock() of a MultiLock or RedLock with default options.
/// \param lock the composite lock. \param owner who will hold it. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_lock(CompositeLock lock, thread_id owner, Token&& token) {
  return async_lock(lock, owner, lock_options(), std::forward<Token>(token));
}

/// CompositeLock::try_lock() for `owner` with any completion token: void(error_code, bool).
/// \param lock the MultiLock or RedLock. \param owner who will hold it.
/// \param options wait, lease and cancellation. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_lock(CompositeLock lock, thread_id owner, lock_options options, Token&& token) {
  return async_wait<bool>(
      [lock, owner](const lock_options& o, completion<bool> done) mutable {
        lock.try_lock_async(owner, o, std::move(done));
      },
      [lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); }, std::move(options),
      std::forward<Token>(token));
}

/// CompositeLock::unlock() of `owner`'s hold with any completion token: void(error_code).
/// \param lock the MultiLock or RedLock. \param owner the holder. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_unlock(CompositeLock lock, thread_id owner, Token&& token) {
  return async_call<void>([lock, owner](completion<void> done) mutable { lock.unlock_async(owner, std::move(done)); },
                          std::forward<Token>(token));
}

// ---- Semaphore

/// Semaphore::acquire() of `permits` with any completion token:
/// void(error_code). See async_wait(): a cancelled wait ends with
/// errc::cancelled, and permits taken although cancellation came first are
/// released before the handler hears it.
/// \param semaphore the semaphore. \param permits how many, > 0 (else errc::invalid_argument).
/// \param options cancellation only, as for acquire() (a wait or a lease is errc::invalid_argument).
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_acquire(Semaphore semaphore, std::int64_t permits, lock_options options, Token&& token) {
  return async_wait<void>(
      [semaphore, permits](const lock_options& o, completion<void> done) mutable {
        semaphore.acquire_async(permits, o, std::move(done));
      },
      [semaphore, permits](completion<void> done) mutable { semaphore.release_async(permits, std::move(done)); },
      std::move(options), std::forward<Token>(token));
}
/// async_acquire() of a Semaphore with default options (no cancel token but the slot's).
/// \param semaphore the semaphore. \param permits how many, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_acquire(Semaphore semaphore, std::int64_t permits, Token&& token) {
  return async_acquire(semaphore, permits, lock_options(), std::forward<Token>(token));
}

/// Semaphore::try_acquire(permits, options) with any completion token:
/// void(error_code, bool), false when the wait ran out. Permits taken for a
/// wait cancelled first are released, as for async_acquire().
/// \param semaphore the semaphore. \param permits how many, > 0.
/// \param options wait (unset: one try) and cancellation. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_acquire(Semaphore semaphore, std::int64_t permits, lock_options options, Token&& token) {
  return async_wait<bool>(
      [semaphore, permits](const lock_options& o, completion<bool> done) mutable {
        semaphore.try_acquire_async(permits, o, std::move(done));
      },
      [semaphore, permits](completion<void> done) mutable { semaphore.release_async(permits, std::move(done)); },
      std::move(options), std::forward<Token>(token));
}

/// Semaphore::release() of `permits` with any completion token: void(error_code).
/// \param semaphore the semaphore. \param permits how many, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_release(Semaphore semaphore, std::int64_t permits, Token&& token) {
  return async_call<void>(
      [semaphore, permits](completion<void> done) mutable { semaphore.release_async(permits, std::move(done)); },
      std::forward<Token>(token));
}

/// Semaphore::release_if_exists() of `permits` with any completion token:
/// void(error_code, bool), false when the semaphore's key does not exist.
/// \param semaphore the semaphore. \param permits how many, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_release_if_exists(Semaphore semaphore, std::int64_t permits, Token&& token) {
  return async_call<bool>(
      [semaphore, permits](completion<bool> done) mutable {
        semaphore.release_if_exists_async(permits, std::move(done));
      },
      std::forward<Token>(token));
}

/// Semaphore::available_permits() with any completion token: void(error_code, std::int64_t).
/// \param semaphore the semaphore. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_available_permits(Semaphore semaphore, Token&& token) {
  return async_call<std::int64_t>(
      [semaphore](completion<std::int64_t> done) { semaphore.available_permits_async(std::move(done)); },
      std::forward<Token>(token));
}

/// Semaphore::try_set_permits() with any completion token: void(error_code, bool).
/// \param semaphore the semaphore. \param permits the count, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_set_permits(Semaphore semaphore, std::int64_t permits, Token&& token) {
  return async_call<bool>(
      [semaphore, permits](completion<bool> done) mutable {
        semaphore.try_set_permits_async(permits, std::move(done));
      },
      std::forward<Token>(token));
}

/// Semaphore::add_permits() with any completion token: void(error_code).
/// \param semaphore the semaphore. \param permits how many to add, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_add_permits(Semaphore semaphore, std::int64_t permits, Token&& token) {
  return async_call<void>(
      [semaphore, permits](completion<void> done) mutable { semaphore.add_permits_async(permits, std::move(done)); },
      std::forward<Token>(token));
}

/// Semaphore::drain_permits() with any completion token: void(error_code, std::int64_t),
/// how many permits were taken.
/// \param semaphore the semaphore. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_drain_permits(Semaphore semaphore, Token&& token) {
  return async_call<std::int64_t>(
      [semaphore](completion<std::int64_t> done) mutable { semaphore.drain_permits_async(std::move(done)); },
      std::forward<Token>(token));
}

// ---- PermitExpirableSemaphore

/// PermitExpirableSemaphore::acquire(options) with any completion token:
/// void(error_code, std::string), the permit's id. A permit taken although
/// cancellation came first is released before the handler hears
/// errc::cancelled (see async_wait()).
/// \param semaphore the semaphore.
/// \param options lease (unset: the watchdog keeps the permit) and cancellation; no wait.
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_acquire(PermitExpirableSemaphore semaphore, lock_options options, Token&& token) {
  // The give-back needs the permit's id: the acquire's callback keeps it
  // before the outcome is judged (both on the I/O thread); a give-back runs
  // only after that.
  auto taken = std::make_shared<std::string>();
  return async_wait<std::string>(
      [semaphore, taken](const lock_options& o, completion<std::string> done) mutable {
        semaphore.acquire_async(o, [taken, done = std::move(done)](std::error_code error, std::string id) {
          if (!error) *taken = id;
          done(error, std::move(id));
        });
      },
      [semaphore, taken](completion<void> done) mutable { semaphore.release_async(*taken, std::move(done)); },
      std::move(options), std::forward<Token>(token));
}
/// async_acquire() of a PermitExpirableSemaphore with default options.
/// \param semaphore the semaphore. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_acquire(PermitExpirableSemaphore semaphore, Token&& token) {
  return async_acquire(semaphore, lock_options(), std::forward<Token>(token));
}

/// PermitExpirableSemaphore::try_acquire(options) with any completion token:
/// void(error_code, std::optional<std::string>), empty when the wait ran out.
/// A permit taken for a wait cancelled first is released, as for async_acquire().
/// \param semaphore the semaphore. \param options wait (unset: one try), lease and cancellation.
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_acquire(PermitExpirableSemaphore semaphore, lock_options options, Token&& token) {
  auto taken = std::make_shared<std::string>();
  return async_wait<std::optional<std::string>>(
      [semaphore, taken](const lock_options& o, completion<std::optional<std::string>> done) mutable {
        semaphore.try_acquire_async(
            o, [taken, done = std::move(done)](std::error_code error, std::optional<std::string> id) {
              if (!error && id) *taken = *id;
              done(error, std::move(id));
            });
      },
      [semaphore, taken](completion<void> done) mutable { semaphore.release_async(*taken, std::move(done)); },
      std::move(options), std::forward<Token>(token));
}

/// PermitExpirableSemaphore::release(id) with any completion token:
/// void(error_code): errc::lease_expired when its lease had run out,
/// errc::not_owner when no such permit is held.
/// \param semaphore the semaphore. \param id the permit's id. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_release(PermitExpirableSemaphore semaphore, std::string id, Token&& token) {
  return async_call<void>(
      [semaphore, id = std::move(id)](completion<void> done) mutable { semaphore.release_async(id, std::move(done)); },
      std::forward<Token>(token));
}

/// PermitExpirableSemaphore::try_release(id) with any completion token:
/// void(error_code, bool), false when the permit is not held.
/// \param semaphore the semaphore. \param id the permit's id. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_release(PermitExpirableSemaphore semaphore, std::string id, Token&& token) {
  return async_call<bool>([semaphore, id = std::move(id)](
                              completion<bool> done) mutable { semaphore.try_release_async(id, std::move(done)); },
                          std::forward<Token>(token));
}

/// PermitExpirableSemaphore::lease_time(id) with any completion token:
/// void(error_code, std::optional<std::chrono::milliseconds>), nullopt for a
/// permit that never expires; errc::not_owner when it is not held.
/// \param semaphore the semaphore. \param id the permit's id. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_lease_time(PermitExpirableSemaphore semaphore, std::string id, Token&& token) {
  return async_call<std::optional<std::chrono::milliseconds>>(
      [semaphore, id = std::move(id)](completion<std::optional<std::chrono::milliseconds>> done) {
        semaphore.lease_time_async(id, std::move(done));
      },
      std::forward<Token>(token));
}

/// PermitExpirableSemaphore::update_lease_time(id, lease) with any completion
/// token: void(error_code, bool), false when the permit is not held.
/// \param semaphore the semaphore. \param id the permit's id.
/// \param lease the new lease from now, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Rep, class Period, class Token>
auto async_update_lease_time(PermitExpirableSemaphore semaphore, std::string id,
                             const std::chrono::duration<Rep, Period>& lease, Token&& token) {
  return async_call<bool>(
      [semaphore, id = std::move(id), lease = detail::to_ms(lease)](completion<bool> done) mutable {
        semaphore.update_lease_time_async(id, lease, std::move(done));
      },
      std::forward<Token>(token));
}

/// PermitExpirableSemaphore::available_permits() with any completion token:
/// void(error_code, std::int64_t).
/// \param semaphore the semaphore. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_available_permits(PermitExpirableSemaphore semaphore, Token&& token) {
  return async_call<std::int64_t>(
      [semaphore](completion<std::int64_t> done) { semaphore.available_permits_async(std::move(done)); },
      std::forward<Token>(token));
}

/// PermitExpirableSemaphore::acquired_permits() with any completion token:
/// void(error_code, std::int64_t).
/// \param semaphore the semaphore. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_acquired_permits(PermitExpirableSemaphore semaphore, Token&& token) {
  return async_call<std::int64_t>(
      [semaphore](completion<std::int64_t> done) { semaphore.acquired_permits_async(std::move(done)); },
      std::forward<Token>(token));
}

/// PermitExpirableSemaphore::try_set_permits() with any completion token: void(error_code, bool).
/// \param semaphore the semaphore. \param permits the count, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_set_permits(PermitExpirableSemaphore semaphore, std::int64_t permits, Token&& token) {
  return async_call<bool>(
      [semaphore, permits](completion<bool> done) mutable {
        semaphore.try_set_permits_async(permits, std::move(done));
      },
      std::forward<Token>(token));
}

/// PermitExpirableSemaphore::set_permits() with any completion token: void(error_code).
/// \param semaphore the semaphore. \param permits free + held permits, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_set_permits(PermitExpirableSemaphore semaphore, std::int64_t permits, Token&& token) {
  return async_call<void>(
      [semaphore, permits](completion<void> done) mutable { semaphore.set_permits_async(permits, std::move(done)); },
      std::forward<Token>(token));
}

// ---- CountDownLatch

/// CountDownLatch::wait() with any completion token: void(error_code), once
/// the latch is open. A cancelled wait (the slot, or `cancel`) ends with
/// errc::cancelled and leaves no subscription; it takes nothing, so nothing
/// is given back. (An overload of the generic async_wait<T>() above, told
/// apart by its first argument.)
/// \param latch the latch. \param cancel ends the wait with errc::cancelled
///   (replaced by the slot's when the handler has a connected slot).
/// \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_wait(CountDownLatch latch, cancel_token cancel, Token&& token) {
  return async_wait<void>(
      [latch](const lock_options& o, completion<void> done) mutable { latch.wait_async(o.cancel(), std::move(done)); },
      nullptr, lock_options().with_cancel(std::move(cancel)), std::forward<Token>(token));
}
/// CountDownLatch::wait() with any completion token, cancelled through the slot only.
/// \param latch the latch. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_wait(CountDownLatch latch, Token&& token) {
  return async_wait(latch, cancel_token(), std::forward<Token>(token));
}

/// CountDownLatch::wait_for() with any completion token: void(error_code,
/// bool), false when the wait ran out. Cancelled as async_wait() of a latch.
/// \param latch the latch. \param wait how long at most, >= 0.
/// \param cancel ends the wait with errc::cancelled. \param token any completion token.
/// \return what the token makes of the signature.
template <class Rep, class Period, class Token>
auto async_wait_for(CountDownLatch latch, const std::chrono::duration<Rep, Period>& wait, cancel_token cancel,
                    Token&& token) {
  return async_wait<bool>(
      [latch, wait = detail::to_ms(wait)](const lock_options& o, completion<bool> done) mutable {
        latch.wait_for_async(wait, o.cancel(), std::move(done));
      },
      nullptr, lock_options().with_cancel(std::move(cancel)), std::forward<Token>(token));
}
/// CountDownLatch::wait_for() with any completion token, cancelled through the slot only.
/// \param latch the latch. \param wait how long at most, >= 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Rep, class Period, class Token>
auto async_wait_for(CountDownLatch latch, const std::chrono::duration<Rep, Period>& wait, Token&& token) {
  return async_wait_for(latch, wait, cancel_token(), std::forward<Token>(token));
}

/// CountDownLatch::count_down() with any completion token: void(error_code).
/// \param latch the latch. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_count_down(CountDownLatch latch, Token&& token) {
  return async_call<void>([latch](completion<void> done) mutable { latch.count_down_async(std::move(done)); },
                          std::forward<Token>(token));
}

/// CountDownLatch::try_set_count() with any completion token: void(error_code, bool).
/// \param latch the latch. \param count the count, > 0. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_try_set_count(CountDownLatch latch, std::int64_t count, Token&& token) {
  return async_call<bool>(
      [latch, count](completion<bool> done) mutable { latch.try_set_count_async(count, std::move(done)); },
      std::forward<Token>(token));
}

/// CountDownLatch::count() with any completion token: void(error_code, std::int64_t), 0 when open.
/// \param latch the latch. \param token any completion token.
/// \return what the token makes of the signature.
template <class Token>
auto async_count(CountDownLatch latch, Token&& token) {
  return async_call<std::int64_t>([latch](completion<std::int64_t> done) { latch.count_async(std::move(done)); },
                                  std::forward<Token>(token));
}

}  // namespace warden
