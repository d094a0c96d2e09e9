// warden — distributed locks on Redis.
// AcquireFuture: the result of an asynchronous acquire, which gives back a
// hold that nobody collects.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <utility>

namespace warden {

namespace detail {
struct access;  // the library's own way in (src/api/access.hpp)
}

/// \brief The result of the future forms of the asynchronous acquires
/// (lock_async, try_lock_async and their token twins).
///
/// Used like a std::future (get, valid, wait, wait_for, wait_until; movable,
/// not copyable), with one difference: the hold belongs to whoever calls
/// get(). When an AcquireFuture is destroyed (or assigned over) before get()
/// was called, the acquire is abandoned: if it takes the lock — already, or
/// later, when its wait ends — the hold is released at once on the Client's
/// I/O thread instead of being renewed for ever. A hold is yours only once
/// get() returned (true, or a token).
/// \tparam T void (lock_async), bool (try_lock_async), or the token types of FencedLock.
template <class T>
class AcquireFuture {
 public:
  /// An empty future: valid() is false.
  AcquireFuture() noexcept = default;
  /// Takes over `other`'s acquire; `other` is left empty.
  AcquireFuture(AcquireFuture&& other) noexcept
      : future_(std::move(other.future_)), abandon_(std::exchange(other.abandon_, nullptr)) {}
  /// Abandons this future's own acquire (see the class), then takes over `other`'s.
  AcquireFuture& operator=(AcquireFuture&& other) noexcept {
    if (this != &other) {
      abandon();
      future_ = std::move(other.future_);
      abandon_ = std::exchange(other.abandon_, nullptr);
    }
    return *this;
  }
  AcquireFuture(const AcquireFuture&) = delete;
  AcquireFuture& operator=(const AcquireFuture&) = delete;
  /// Abandons the acquire unless get() was called (see the class).
  ~AcquireFuture() { abandon(); }

  /// Waits for the outcome and takes it: from here the hold (if any) is the
  /// caller's to unlock. Leaves valid() false.
  /// \return the acquire's value (nothing for void, whether it was acquired
  ///   for bool, the token for the token forms).
  /// \throws warden::Error as the acquire failed, or std::future_error when !valid().
  T get() {
    abandon_ = nullptr;
    return future_.get();
  }
  /// \return true while the outcome has not been taken with get().
  bool valid() const noexcept { return future_.valid(); }
  /// Waits until the outcome is there.
  void wait() const { future_.wait(); }
  /// Waits at most `timeout` for the outcome.
  /// \return as std::future::wait_for.
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
    return future_.wait_for(timeout);
  }
  /// Waits at most until `deadline` for the outcome.
  /// \return as std::future::wait_until.
  template <class Clock, class Duration>
  std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
    return future_.wait_until(deadline);
  }

 private:
  friend struct detail::access;
  // `abandon` gives the hold back if the acquire takes one; it never throws.
  AcquireFuture(std::future<T> future, std::function<void()> abandon) noexcept
      : future_(std::move(future)), abandon_(std::move(abandon)) {}

  void abandon() noexcept {
    if (auto give_back = std::exchange(abandon_, nullptr)) give_back();
  }

  std::future<T> future_;
  std::function<void()> abandon_;
};

}  // namespace warden
