// warden — distributed locks on Redis.
// Lost-lock listeners: what they are told, and the subscription that keeps
// one registered. Shared by every lock kind.
#pragma once

#include <warden/export.hpp>

#include <functional>
#include <string>
#include <system_error>
#include <utility>

#include <warden/thread_id.hpp>

namespace warden {

namespace detail {
struct access;  // the library's own way in (src/api/access.hpp)
}

/// \brief What a lost-lock listener is told.
struct WARDEN_API LockLost {
  /// The lock whose hold was lost (for a composite lock: the member, or every
  /// member for a failed release).
  std::string lock_name;
  /// The thread id part of the owner whose hold was lost.
  thread_id owner;
  /// errc::lease_expired (gone on the server), a connection error, or the
  /// error a release failed with.
  std::error_code cause;
  /// Names the lock and the server.
  std::string message;
};

/// \brief A lost-lock listener.
///
/// Runs on a Client's I/O thread: it must not block, and uses the
/// completion-callback forms of the *_async calls if it needs the lock (a
/// blocking call there throws errc::would_deadlock; a future there could only
/// be waited for by blocking the thread that completes it). What it throws is
/// caught and logged.
using lost_listener = std::function<void(const LockLost&)>;

/// \brief Keeps a lost-lock listener registered for its lifetime (RAII).
///
/// Made by subscribe_lost() of every lock kind; the listener is removed when
/// the subscription is destroyed, assigned over or reset(). Once that
/// returns, the listener is not running and is never called again (when done
/// from inside the listener itself, which is allowed, the call under way on
/// this thread is not waited for). Movable, not copyable. A listener that
/// captures a handle of its own lock keeps the lock and its Client's state
/// alive for as long as its subscription lives.
class LostSubscription {
 public:
  /// A subscription to nothing.
  LostSubscription() noexcept = default;
  /// Takes over `other`'s listener; `other` is left empty.
  LostSubscription(LostSubscription&& other) noexcept : remove_(std::exchange(other.remove_, nullptr)) {}
  /// Removes this subscription's listener, then takes over `other`'s.
  LostSubscription& operator=(LostSubscription&& other) noexcept {
    if (this != &other) {
      reset();
      remove_ = std::exchange(other.remove_, nullptr);
    }
    return *this;
  }
  LostSubscription(const LostSubscription&) = delete;
  LostSubscription& operator=(const LostSubscription&) = delete;
  /// Removes the listener.
  ~LostSubscription() { reset(); }

  /// Removes the listener now; afterwards a no-op.
  void reset() noexcept {
    if (auto remove = std::exchange(remove_, nullptr)) remove();
  }
  /// \return true while a listener is registered through this subscription.
  explicit operator bool() const noexcept { return static_cast<bool>(remove_); }

 private:
  friend struct detail::access;
  explicit LostSubscription(std::function<void()> remove) noexcept : remove_(std::move(remove)) {}
  std::function<void()> remove_;
};

}  // namespace warden
