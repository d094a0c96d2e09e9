// warden — distributed locks on Redis.
// AcquireFuture: the result of an asynchronous acquire, which gives back a
// hold that nobody collects.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <utility>

namespace warden {

namespace detail {
class AcquireClaim;
// The future is gone without get(): release the hold if the acquire took one
// (now, or when it completes).
WARDEN_API void abandon(const std::shared_ptr<AcquireClaim>& claim) noexcept;
}  // namespace detail

// Returned by the future forms of lock_async and try_lock_async. Used like a
// std::future (get, valid, wait, wait_for, wait_until; movable, not copyable),
// with one difference: the hold belongs to whoever calls get(). When an
// AcquireFuture is destroyed (or assigned over) before get() was called, the
// acquire is abandoned: if it takes the lock — already, or later, when its
// wait ends — the hold is released at once on the Client's I/O thread instead
// of being renewed for ever. A hold is yours only once get() returned (true).
template <class T>
class AcquireFuture {
 public:
  AcquireFuture() noexcept = default;
  AcquireFuture(std::future<T> future, std::shared_ptr<detail::AcquireClaim> claim) noexcept
      : future_(std::move(future)), claim_(std::move(claim)) {}
  AcquireFuture(AcquireFuture&&) noexcept = default;
  AcquireFuture& operator=(AcquireFuture&& other) noexcept {
    if (this != &other) {
      abandon();
      future_ = std::move(other.future_);
      claim_ = std::move(other.claim_);
    }
    return *this;
  }
  AcquireFuture(const AcquireFuture&) = delete;
  AcquireFuture& operator=(const AcquireFuture&) = delete;
  ~AcquireFuture() { abandon(); }

  // Waits for the outcome and takes it: from here the hold (if any) is the
  // caller's to unlock. Throws warden::Error as the acquire failed, or
  // std::future_error when !valid(). Leaves valid() false.
  T get() {
    claim_.reset();
    return future_.get();
  }
  bool valid() const noexcept { return future_.valid(); }
  void wait() const { future_.wait(); }
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
    return future_.wait_for(timeout);
  }
  template <class Clock, class Duration>
  std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
    return future_.wait_until(deadline);
  }

 private:
  void abandon() noexcept {
    if (claim_) detail::abandon(claim_);
    claim_.reset();
  }

  std::future<T> future_;
  std::shared_ptr<detail::AcquireClaim> claim_;
};

}  // namespace warden
