// warden — distributed locks on Redis.
// FencedLock: a re-entrant lock whose every acquire hands out a fencing token.
#pragma once

#include <warden/export.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <utility>

#include <warden/acquire_future.hpp>
#include <warden/cancel.hpp>
#include <warden/lock.hpp>
#include <warden/lock_options.hpp>

namespace warden {

namespace detail {
class FencedLockCore;
}

/// \brief A Lock whose every successful acquire, re-entry included, increments the
/// counter redisson_lock_token:{NAME} and returns the new value: the fencing
/// token of that hold (Redisson's RFencedLock, same keys and replies, so Java
/// and C++ holders draw from one counter).
///
/// Why: a holder can be paused (GC, swap, SIGSTOP, a frozen VM) or cut off
/// past its lease and wake up still believing it holds the lock, while
/// another holder already has it; after a failover a lock can even be granted
/// twice. Checking valid_until() narrows that window but cannot close it, since
/// the pause can fall between the check and the write. A token closes it where
/// it matters: the holder sends its token with every write, and the protected
/// resource refuses a token that is not higher than the highest it has
/// already accepted. Tokens of later holders are always higher, so a stale
/// holder's write is refused however late it arrives. (Its limits: the
/// resource must do the check, atomically with the write; and a failover or
/// restart that loses the counter's latest increments makes it hand out
/// tokens again, which a strict check refuses — safe, but those holders are
/// refused until the counter passes them: persist the counter's server.
/// See docs/choosing-a-lock.md.)
///
/// Tokens are strictly increasing across holders and acquires; they are not
/// dense (an acquire whose reply was lost and that is kept draws a second one).
/// The counter has no expiry and warden never deletes it. force_unlock()
/// leaves it as it is.
///
/// Everything Lock offers works the same way (the operations are BasicLock's,
/// and a FencedLock converts to a Lock): lock(), try_lock() and the rest take
/// holds (and draw tokens) without returning them; token() reads the latest.
/// The token-returning forms take the same lock_options as lock() and
/// try_lock().
class WARDEN_API FencedLock final : public BasicLock {
 public:
  using token_type = std::int64_t;  ///< A fencing token.

  /// \return a Lock handle of this same lock (no token-returning forms).
  operator Lock() const noexcept;  // NOLINT(google-explicit-constructor): a FencedLock is usable as a Lock

  /// As lock(options): waits until held, then returns the hold's token.
  /// \param options the lease (unset: watchdog-renewed) and the cancellation; no wait.
  /// \return the token of the hold taken.
  token_type lock_and_get_token(const lock_options& options = {});

  /// As try_lock(options): the token when acquired within the wait.
  /// \param options the wait (>= 0; unset: one attempt), the lease and the cancellation.
  /// \return the token of the hold taken, or std::nullopt on time-out.
  std::optional<token_type> try_lock_and_get_token(const lock_options& options = {});

  /// The counter's current value (a GET). Throws errc::wrong_type when the
  /// counter key holds something that is not a token counter.
  /// \return the token of the latest acquire by anyone, 0 before the first.
  token_type token() const;

  /// lock_and_get_token(options) for `owner`, without blocking (see
  /// BasicLock::lock_async and AcquireFuture).
  /// \param owner the thread id that will hold the lock.
  /// \param options as for lock_and_get_token().
  /// \return the future of the token.
  AcquireFuture<token_type> lock_and_get_token_async(thread_id owner, const lock_options& options = {});
  /// lock_and_get_token(options) for `owner`, reporting to a callback (see completion).
  /// \param owner the thread id that will hold the lock.
  /// \param options as for lock_and_get_token().
  /// \param done called once with the token.
  void lock_and_get_token_async(thread_id owner, const lock_options& options, completion<token_type> done);
  /// try_lock_and_get_token(options) for `owner`, without blocking.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for try_lock_and_get_token().
  /// \return the future of the token, std::nullopt on time-out.
  AcquireFuture<std::optional<token_type>> try_lock_and_get_token_async(thread_id owner,
                                                                        const lock_options& options = {});
  /// try_lock_and_get_token(options) for `owner`, reporting to a callback.
  /// \param owner the thread id that will hold the lock.
  /// \param options as for try_lock_and_get_token().
  /// \param done called once with the token, std::nullopt on time-out.
  void try_lock_and_get_token_async(thread_id owner, const lock_options& options,
                                    completion<std::optional<token_type>> done);
  /// token() without blocking.
  /// \return a future of the counter's current value.
  std::future<token_type> token_async() const;
  /// token() reporting to a callback.
  /// \param done called once with the counter's current value.
  void token_async(completion<token_type> done) const;

 private:
  friend struct detail::access;
  explicit FencedLock(std::shared_ptr<detail::FencedLockCore> core) noexcept;

  detail::FencedLockCore* fenced_;  // the core BasicLock keeps alive, as its kind
};

}  // namespace warden
