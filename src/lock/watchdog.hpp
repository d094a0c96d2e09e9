// The holds this client knows it has, and the one timer that renews every
// watchdog-mode hold every lease/3, many holds per script call.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include <warden/thread_id.hpp>

#include "io/timer_queue.hpp"

namespace warden::detail {

class ClientCore;
class LockCore;

class Watchdog {
 public:
  // Holds per renewal script call: large enough to amortise the round trip,
  // small enough to keep one script's run short on the server.
  static constexpr std::size_t batch_size = 100;

  explicit Watchdog(ClientCore& client) : client_(client) {}

  // All below run on the loop thread, except valid_until().

  // An acquire succeeded. `lease` nullopt: renewed by the watchdog. `sent`: when
  // the acquire was sent, the earliest the server can have started the lease.
  void acquired(const std::shared_ptr<LockCore>& lock, thread_id owner, std::optional<std::chrono::milliseconds> lease,
                clock::time_point sent);

  // Before a release is sent: the lease to leave on the lock should holds
  // remain. When this is the owner's last hold, renewal stops now, so that no
  // renewal can follow the release on the wire.
  std::chrono::milliseconds releasing(const LockCore& lock, thread_id owner);
  // The release's outcome: still held with one hold fewer, fully released, or
  // the server said the owner held nothing.
  void released(const LockCore& lock, thread_id owner, bool freed);
  // Every hold of `owner` now has the fixed `lease`, set at `sent`: the
  // watchdog stops renewing them and they expire by themselves.
  void leased(const LockCore& lock, thread_id owner, std::chrono::milliseconds lease, clock::time_point sent);
  // Forgets the owner's holds (release failed, or the server says it held nothing).
  void forget(const LockCore& lock, thread_id owner);

  // Whether this client believed `owner` held the lock, or lost it recently:
  // a failed unlock is then "lease expired" rather than "not owner".
  bool knew_of(const LockCore& lock, thread_id owner) const;
  int count(const LockCore& lock, thread_id owner) const;

  // Any thread.
  clock::time_point valid_until(const LockCore& lock, thread_id owner) const;
  // valid_until and when the server last confirmed it (the acquire's or the
  // renewal's reply arrived): RedLock judges its nodes' confirmations in the
  // order they happened. {min, min} when not held.
  struct confirmation {
    clock::time_point valid_until = clock::time_point::min();
    clock::time_point at = clock::time_point::min();
  };
  confirmation confirmed(const LockCore& lock, thread_id owner) const;

  void stop();

 private:
  struct Hold {
    std::shared_ptr<LockCore> lock;
    std::vector<bool> renewed;  // one entry per re-entrant hold: watchdog mode?
    clock::time_point valid_until{};
    clock::time_point confirmed_at{};
    std::uint64_t epoch = 0;
    bool releasing = false;
    bool renewing = false;  // a renewal of it is in flight
    TimerQueue::id expiry = 0;
    bool watchdog_mode() const;
  };
  using key = std::pair<const LockCore*, thread_id>;

  void schedule(std::chrono::milliseconds delay);
  void tick();
  void renewed(const std::vector<std::pair<key, std::uint64_t>>& batch, clock::time_point sent,
               std::error_code error, const std::vector<long long>& results);
  void lose(const key& which, std::error_code cause, const std::string& why);
  void arm_expiry(const key& which, Hold& hold);

  ClientCore& client_;
  mutable std::mutex mutex_;  // guards holds_ and lost_ for valid_until() readers
  std::map<key, Hold> holds_;
  std::map<key, std::shared_ptr<LockCore>> lost_;  // kept alive so the key stays unambiguous
  std::uint64_t next_epoch_ = 1;
  TimerQueue::id timer_ = 0;
  clock::time_point timer_at_{};
  bool stopped_ = false;
};

}  // namespace warden::detail
