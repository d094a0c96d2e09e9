// warden — distributed locks on Redis.
// FairLock: a re-entrant lock handed out first come, first served.
#pragma once

#include <warden/export.hpp>

#include <warden/lock.hpp>

namespace warden {

/// \brief A Lock that owners get in the order they started waiting, across processes
/// and clients (Redisson's RFairLock, same keys and messages).
///
/// A FairLock is a Lock (the same type): Client::get_fair_lock() makes a Lock
/// whose kind is fair. Everything Lock offers works the same way, with
/// std::lock_guard and friends too. What differs:
///
/// - An owner that finds the lock taken and is willing to wait joins the
///   queue redisson_lock_queue:{NAME}. Only the queue head may take the lock,
///   even when it is free; owners who ask later, or who only try once
///   (try_lock(), a zero wait), do not overtake it.
/// - A release wakes only the queue head, on its own channel
///   redisson_lock__channel:{NAME}:<owner>; the other waiters sleep on.
/// - A waiter whose process died is dropped from the queue once it has gone
///   unseen for Config::fair_lock_wait_timeout (its deadline is kept in
///   redisson_lock_timeout:{NAME}, epoch ms by the server's clock), plus that
///   long again for each dead waiter dropped ahead of it. A live waiter tries
///   again at least every fair_lock_wait_timeout / 3, which moves its deadline
///   on, so it keeps its place however long it waits (one cut off from the
///   server for longer than the timeout loses its place and queues again at
///   the end when it is back).
/// - The queue may be shared with Redisson's waiters, which write their
///   deadline once and never refresh it. Dropping a dead head leaves every
///   other deadline as it is (Redisson's rule), so a live Redisson waiter
///   behind a dead one keeps its place, and nobody behind it jumps ahead.
/// - A MultiLock over fair locks keeps its places in their queues between its
///   attempts, and leaves them when its call ends without the lock.
/// - A bounded try_lock (try_lock_for(), try_lock_until(), a wait in lock_options) that times out (or fails, or a wait
///   that is cancelled) leaves the queue before it returns, as Redisson's
///   tryLock does: once it returned false, its place is gone. Those behind it
///   move up one place, their deadlines moved forward by the same step, never
///   back. The async forms deliver their answer after it too. Should the
///   server not answer the leaving in time, the call still answers within
///   its bound (wait + Config::command_timeout) and the place expires with
///   its deadline.
/// - unlock() and force_unlock() wake the queue head.
using FairLock = Lock;

}  // namespace warden
