// warden — distributed locks on Redis.
// Lost-lock listeners: what they are told, how they are identified, and the
// subscription that keeps one registered. Shared by every lock kind.
#pragma once

#include <warden/export.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <system_error>
#include <utility>

#include <warden/thread_id.hpp>

namespace warden {

// What a lost-lock listener is told.
struct WARDEN_API LockLost {
  std::string lock_name;
  thread_id owner;       // the thread id part of the owner whose hold was lost
  std::error_code cause; // errc::lease_expired (gone on the server), a connection error, or
                         // the error a release failed with
  std::string message;   // names the lock and the server
};

// A lost-lock listener. Runs on a Client's I/O thread: it must not block, and
// uses the completion-callback forms of the *_async calls if it needs the lock
// (a blocking call there throws errc::would_deadlock; a future there could
// only be waited for by blocking the thread that completes it). What it throws
// is caught and logged.
using lost_listener = std::function<void(const LockLost&)>;
// Identifies a listener for remove_lost_listener. Never 0.
using lost_listener_id = std::uint64_t;

// Keeps a lost-lock listener registered for its lifetime (RAII): made by
// subscribe_lost() of every lock kind, it removes the listener when destroyed
// or reset. Movable, not copyable. Destroying it from inside the listener
// itself is allowed.
class LostSubscription {
 public:
  LostSubscription() noexcept = default;
  explicit LostSubscription(std::function<void()> remove) noexcept : remove_(std::move(remove)) {}
  LostSubscription(LostSubscription&& other) noexcept : remove_(std::exchange(other.remove_, nullptr)) {}
  LostSubscription& operator=(LostSubscription&& other) noexcept {
    if (this != &other) {
      reset();
      remove_ = std::exchange(other.remove_, nullptr);
    }
    return *this;
  }
  LostSubscription(const LostSubscription&) = delete;
  LostSubscription& operator=(const LostSubscription&) = delete;
  ~LostSubscription() { reset(); }

  // Removes the listener now (see remove_lost_listener); then a no-op.
  void reset() noexcept {
    if (auto remove = std::exchange(remove_, nullptr)) remove();
  }
  explicit operator bool() const noexcept { return static_cast<bool>(remove_); }

 private:
  std::function<void()> remove_;
};

}  // namespace warden
