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
#include <warden/detail/duration.hpp>
#include <warden/lock.hpp>

namespace warden {

// A Lock whose every successful acquire, re-entry included, increments the
// counter redisson_lock_token:{NAME} and returns the new value: the fencing
// token of that hold (Redisson's RFencedLock, same keys and replies, so Java
// and C++ holders draw from one counter).
//
// Why: a holder can be paused (GC, swap, SIGSTOP, a frozen VM) or cut off
// past its lease and wake up still believing it holds the lock, while
// another holder already has it; after a failover a lock can even be granted
// twice. Checking valid_until() narrows that window but cannot close it, since
// the pause can fall between the check and the write. A token closes it where
// it matters: the holder sends its token with every write, and the protected
// resource refuses a token that is not higher than the highest it has
// already accepted. Tokens of later holders are always higher, so a stale
// holder's write is refused however late it arrives. (Its limits: the
// resource must do the check, atomically with the write; and a failover or
// restart that loses the counter's latest increments makes it hand out
// tokens again, which a strict check refuses — safe, but those holders are
// refused until the counter passes them: persist the counter's server.
// See docs/choosing-a-lock.md.)
//
// Tokens are strictly increasing across holders and acquires; they are not
// dense (an acquire whose reply was lost and that is kept draws a second one).
// The counter has no expiry and warden never deletes it. force_unlock()
// leaves it as it is.
//
// Everything Lock offers works the same way: lock(), try_lock_for() and the
// rest take holds (and draw tokens) without returning them; token() reads
// the latest. The token-returning forms:
class WARDEN_API FencedLock : public Lock {
 public:
  // As lock(): waits until held (watchdog-renewed), then returns the token.
  std::int64_t lock_and_get_token();
  // As lock(cancel).
  std::int64_t lock_and_get_token(const cancel_token& cancel);
  // As lock(lease): a fixed lease (positive, at most ten years).
  template <class Rep, class Period>
  std::int64_t lock_and_get_token(const std::chrono::duration<Rep, Period>& lease) {
    return lock_and_get_token_ms(detail::to_ms(lease));
  }

  // As try_lock_for(wait[, lease]): the token when acquired within `wait`
  // (>= 0; zero: one attempt, no waiting), std::nullopt on time-out.
  template <class Rep, class Period>
  std::optional<std::int64_t> try_lock_and_get_token(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock_and_get_token_ms(detail::to_ms(wait), std::nullopt);
  }
  template <class Rep1, class Period1, class Rep2, class Period2>
  std::optional<std::int64_t> try_lock_and_get_token(const std::chrono::duration<Rep1, Period1>& wait,
                                                     const std::chrono::duration<Rep2, Period2>& lease) {
    return try_lock_and_get_token_ms(detail::to_ms(wait), detail::to_ms(lease));
  }

  // The counter's current value (a GET): the token of the latest acquire by
  // anyone, 0 before the first. Throws errc::wrong_type when the counter key
  // holds something that is not a token counter.
  std::int64_t token() const;

  // Asynchronous twins, as Lock's (see there for owners, AcquireFuture and
  // completion callbacks).
  AcquireFuture<std::int64_t> lock_and_get_token_async(thread_id owner);
  AcquireFuture<std::int64_t> lock_and_get_token_async(thread_id owner, milliseconds lease);
  AcquireFuture<std::int64_t> lock_and_get_token_async(thread_id owner, const cancel_token& cancel);
  void lock_and_get_token_async(thread_id owner, completion<std::int64_t> done);
  void lock_and_get_token_async(thread_id owner, milliseconds lease, completion<std::int64_t> done);
  AcquireFuture<std::optional<std::int64_t>> try_lock_and_get_token_async(thread_id owner, milliseconds wait);
  AcquireFuture<std::optional<std::int64_t>> try_lock_and_get_token_async(thread_id owner, milliseconds wait,
                                                                         milliseconds lease);
  void try_lock_and_get_token_async(thread_id owner, milliseconds wait,
                                    completion<std::optional<std::int64_t>> done);
  void try_lock_and_get_token_async(thread_id owner, milliseconds wait, milliseconds lease,
                                    completion<std::optional<std::int64_t>> done);
  std::future<std::int64_t> token_async() const;
  void token_async(completion<std::int64_t> done) const;

 private:
  friend struct detail::access;
  explicit FencedLock(std::shared_ptr<detail::LockCore> core) noexcept : Lock(std::move(core)) {}
  std::int64_t lock_and_get_token_ms(milliseconds lease);
  std::optional<std::int64_t> try_lock_and_get_token_ms(milliseconds wait, std::optional<milliseconds> lease);
};

}  // namespace warden
