// warden — distributed locks on Redis.
// Internal: the duration and deadline overloads every warden lock offers.
#pragma once

#include <chrono>
#include <optional>

#include <warden/detail/duration.hpp>

namespace warden::detail {

// Turns any std::chrono duration or deadline into whole milliseconds
// (saturating, see duration.hpp) and calls the two members each lock kind
// implements:
//   void lock_with_lease(std::chrono::milliseconds lease);
//   bool try_lock_for_ms(std::chrono::milliseconds wait, std::optional<std::chrono::milliseconds> lease);
// A lock derives from timed_lockable<itself>, befriends it, and brings lock()
// in with a using-declaration next to its own no-argument lock(). What each
// call means for the lock kind is documented there.
template <class Derived>
class timed_lockable {
 public:
  template <class Rep, class Period>
  void lock(const std::chrono::duration<Rep, Period>& lease) {
    self().lock_with_lease(to_ms(lease));
  }

  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return self().try_lock_for_ms(to_ms(wait), std::nullopt);
  }
  template <class Rep1, class Period1, class Rep2, class Period2>
  bool try_lock_for(const std::chrono::duration<Rep1, Period1>& wait,
                    const std::chrono::duration<Rep2, Period2>& lease) {
    return self().try_lock_for_ms(to_ms(wait), to_ms(lease));
  }

  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return self().try_lock_for_ms(until(deadline), std::nullopt);
  }
  template <class Clock, class Duration, class Rep, class Period>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline,
                      const std::chrono::duration<Rep, Period>& lease) {
    return self().try_lock_for_ms(until(deadline), to_ms(lease));
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace warden::detail
