// warden — distributed locks on Redis.
// CountDownLatch: a distributed std::latch, in the Redis layout of Redisson's
// RCountDownLatch (services in Java and C++ share one).
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include <warden/cancel.hpp>
#include <warden/detail/duration.hpp>
#include <warden/lock.hpp>

namespace warden {

namespace detail {
class CountDownLatchCore;
struct access;
}  // namespace detail

/// \brief A handle to one named count-down latch: a counter in Redis that
/// callers count down, and that every waiter, in this process or any other,
/// waits to reach zero.
///
/// Made by Client::get_count_down_latch(). Unlike std::latch it is set after
/// it is made (try_set_count(), once it is open again), and a latch whose key
/// does not exist is open: count() is 0 and wait() returns at once.
///
/// The Redis layout is Redisson's RCountDownLatch: the key is the name, a
/// string holding the count; count_down() decrements it and deletes it at 0
/// or below, telling the channel `redisson_countdownlatch__channel__{NAME}`
/// "0" when it reaches 0; try_set_count() and remove() tell it "1".
///
/// Waiting is by pub/sub, as lock waiters do: one subscription per channel
/// per Client however many wait, the count read only after the subscription
/// is confirmed (an opening cannot be missed between the two), and every
/// waiter of the Client woken by the message that opens the latch. Handles
/// are cheap to copy; every member is safe to call from any thread. Blocking
/// calls made on the Client's I/O thread (inside a callback) throw
/// errc::would_deadlock.
///
/// Errors: a key that is not a latch (another type, or a string that is not
/// a number) gives errc::wrong_type naming the latch, and nothing in Redis is
/// changed; a count <= 0 gives errc::invalid_argument, nothing sent.
/// Connection errors are as for locks.
class WARDEN_API CountDownLatch final {
 public:
  using milliseconds = std::chrono::milliseconds;  ///< The unit of its waits.

  /// \return the latch's name, which is also its Redis key.
  const std::string& name() const noexcept;

  /// Sets the count to `count` if the latch has none (it is open), and tells
  /// the channel "1" (RCountDownLatch.trySetCount). Throws warden::Error.
  /// \param count the count, > 0 (else errc::invalid_argument).
  /// \return true if set, false if the latch had a count already.
  bool try_set_count(std::int64_t count);

  /// Counts down by one; the call that brings the count to 0 deletes the key
  /// and wakes every waiter. On an open latch it does nothing. Not resent
  /// after a lost reply (it could count twice): the connection error is
  /// thrown instead. Throws warden::Error.
  void count_down();

  /// One round trip. Throws warden::Error.
  /// \return the count; 0 when the latch is open.
  std::int64_t count() const;

  /// Deletes the latch (RCountDownLatch.delete) and tells the channel "1":
  /// waiters find it open when they next read it. Throws warden::Error.
  /// \return true if there was a latch to delete.
  bool remove();

  /// Waits until the count is 0, however long it takes.
  /// Throws warden::Error: errc::cancelled soon after `cancel` is cancelled,
  /// errc::shut_down when the Client closes, a connection error.
  /// \param cancel ends the wait with errc::cancelled.
  void wait(const cancel_token& cancel = {});

  /// Waits at most `wait` for the count to reach 0.
  /// \param wait any std::chrono duration, >= 0 (else errc::invalid_argument).
  /// \param cancel ends the wait with errc::cancelled.
  /// \return true if the latch is open, false when the wait ran out.
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& wait, const cancel_token& cancel = {}) {
    return wait_for_ms(detail::to_ms(wait), cancel);
  }

  /// try_set_count() without blocking.
  /// \param count the count, > 0.
  /// \return a future of whether the count was set.
  std::future<bool> try_set_count_async(std::int64_t count);
  /// try_set_count() reporting to a callback (see completion).
  /// \param count the count, > 0.
  /// \param done called once with whether the count was set.
  void try_set_count_async(std::int64_t count, completion<bool> done);
  /// count_down() without blocking.
  /// \return a future that throws what count_down() throws.
  std::future<void> count_down_async();
  /// count_down() reporting to a callback.
  /// \param done called once with the error, if any.
  void count_down_async(completion<void> done);
  /// count() without blocking.
  /// \return a future of the count.
  std::future<std::int64_t> count_async() const;
  /// count() reporting to a callback.
  /// \param done called once with the count.
  void count_async(completion<std::int64_t> done) const;
  /// remove() without blocking.
  /// \return a future of whether there was a latch to delete.
  std::future<bool> remove_async();
  /// remove() reporting to a callback.
  /// \param done called once with whether there was a latch to delete.
  void remove_async(completion<bool> done);
  /// wait() without blocking.
  /// \param cancel ends the wait with errc::cancelled.
  /// \return a future that is ready once the latch is open (or throws as wait()).
  std::future<void> wait_async(const cancel_token& cancel = {});
  /// wait() reporting to a callback.
  /// \param cancel ends the wait with errc::cancelled.
  /// \param done called once when the latch is open, or with the error.
  void wait_async(const cancel_token& cancel, completion<void> done);
  /// wait_for() without blocking.
  /// \param wait how long to wait at most, >= 0.
  /// \param cancel ends the wait with errc::cancelled.
  /// \return a future of whether the latch opened in time.
  std::future<bool> wait_for_async(milliseconds wait, const cancel_token& cancel = {});
  /// wait_for() reporting to a callback.
  /// \param wait how long to wait at most, >= 0.
  /// \param cancel ends the wait with errc::cancelled.
  /// \param done called once with whether the latch opened in time.
  void wait_for_async(milliseconds wait, const cancel_token& cancel, completion<bool> done);

 private:
  friend struct detail::access;
  explicit CountDownLatch(std::shared_ptr<detail::CountDownLatchCore> core) noexcept;
  bool wait_for_ms(milliseconds wait, const cancel_token& cancel);

  std::shared_ptr<detail::CountDownLatchCore> core_;
};

}  // namespace warden
