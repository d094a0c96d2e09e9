// warden — distributed locks on Redis.
// SpinLock: a re-entrant lock whose waiters poll with back-off instead of
// subscribing to an unlock channel.
#pragma once

#include <warden/export.hpp>

#include <chrono>

#include <warden/lock.hpp>

namespace warden {

/// \brief How a SpinLock's waiters space their attempts.
///
/// After the n-th failed attempt (n from 0) a waiter sleeps
///   min(initial_delay × multiplier^n, max_delay) + a random extra in [0, jitter]
/// capped by the time its wait has left (on the monotonic clock) and by the
/// holder's remaining lease, then tries again. The default is exponential from
/// 1 ms, × 2, capped at 128 ms, with a little jitter so that waiters that
/// failed together do not retry together; constant(d) tries every d.
///
/// Checked by Client::get_spin_lock (errc::invalid_argument naming the field):
/// initial_delay 1 ms to 1 h, max_delay initial_delay to 1 h, multiplier 1 to
/// 1000, jitter 0 to 1 h.
struct SpinBackoff {
  std::chrono::milliseconds initial_delay{1};  ///< The sleep after the first failed attempt.
  std::chrono::milliseconds max_delay{128};    ///< The longest sleep, before jitter.
  int multiplier = 2;                          ///< Each sleep is the last one times this.
  std::chrono::milliseconds jitter{2};         ///< The most random extra added to a sleep.

  /// Every sleep `delay`, without jitter.
  /// \param delay the sleep between attempts.
  /// \return the back-off.
  static SpinBackoff constant(std::chrono::milliseconds delay) {
    return SpinBackoff{delay, delay, 1, std::chrono::milliseconds{0}};
  }
};

/// \brief A Lock whose waiters do not subscribe (Redisson's RSpinLock, same layout as
/// Lock): for very many locks, where one subscription each costs too much, or
/// for servers where pub/sub is unavailable or forbidden.
///
/// A SpinLock is a Lock (the same type): Client::get_spin_lock() makes a Lock
/// whose kind is spin. Everything Lock offers works the same way. What differs:
///
/// - A waiter that finds the lock taken sleeps on a timer of the Client's I/O
///   thread for the SpinBackoff's next delay and tries again; it holds no
///   thread and no connection meanwhile, and never spins on a CPU.
/// - unlock() and force_unlock() publish nothing: nobody listens. A waiter
///   notices the release at its next attempt, so a hand-off costs up to one
///   back-off delay (up to max_delay + jitter under long contention) where a
///   pub/sub Lock's costs a message; each waiter costs one script call per
///   attempt where a Lock's waiter costs none while it sleeps.
/// - Waiters are served in no particular order; a waiter that has backed off
///   to max_delay competes with newcomers that try at once.
using SpinLock = Lock;

}  // namespace warden
