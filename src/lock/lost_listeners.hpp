// The lost-lock listeners of one lock (plain or composite): any number, added
// and removed from any thread, each called on the I/O thread that found the
// loss. A listener that throws is caught and logged, never ends the process.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <warden/config.hpp>
#include <warden/lock_lost.hpp>

namespace warden::detail {

class LostListeners {
 public:
  using listener = std::function<void(const LockLost&)>;
  using log_fn = std::function<void(log_level, const std::string&)>;

  std::uint64_t add(listener callback);
  // After it returns the listener is not running and is never called again,
  // unless it is called from inside a notification (then the notification in
  // progress on this thread is not waited for).
  void remove(std::uint64_t token);
  // Calls every listener present at the time it reaches it.
  void notify(const LockLost& event, const log_fn& log) const;

  LostListeners() = default;
  LostListeners(const LostListeners&) = delete;
  LostListeners& operator=(const LostListeners&) = delete;
  ~LostListeners();

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable idle;
    std::map<std::uint64_t, listener> listeners;
    std::uint64_t next = 1;
    int notifying = 0;  // notifications in progress, on any thread
  };
  // Made by the first add(): most locks never get a listener, and every
  // lock handle (held or waited on) would otherwise carry a mutex, a
  // condition variable and a map. Never replaced once set.
  State& state();

  mutable std::atomic<State*> state_{nullptr};
};

// Calls `callback`, catching what it throws and logging it (through `log`,
// which itself may throw: that is swallowed). `what` names the callback.
template <class Callback, class... Args>
void call_guarded(const LostListeners::log_fn& log, const char* what, Callback& callback, Args&&... args) noexcept {
  std::string problem;
  try {
    callback(std::forward<Args>(args)...);
    return;
  } catch (const std::exception& error) {
    problem = error.what();
  } catch (...) {
    problem = "an exception that is not a std::exception";
  }
  try {
    if (log) log(log_level::error, std::string("warden: ") + what + " threw, and was ignored: " + problem);
  } catch (...) {
  }
}

}  // namespace warden::detail
