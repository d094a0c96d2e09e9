// The one timer that renews every watchdog-mode hold of the book every
// lease/3, many holds per script call, and the timers that end fixed-lease
// holds when their lease runs out. What is held is the HoldBook's; the
// watchdog only acts on it, on the loop thread.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <warden/thread_id.hpp>

#include "io/timer_queue.hpp"
#include "lock/hold_book.hpp"

namespace warden::detail {

class ClientCore;

class Watchdog final : private HoldBook::Keeper {
 public:
  // Holds per renewal script call: large enough to amortise the round trip,
  // small enough to keep one script's run short on the server.
  static constexpr std::size_t batch_size = 100;

  // Becomes `book`'s keeper.
  Watchdog(ClientCore& client, HoldBook& book);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Stops renewing, cancels every timer and clears the book (shutdown, loop thread).
  void stop();

 private:
  using key = HoldBook::key;

  // HoldBook::Keeper
  void hold_changed(const key& which, const HoldBook::Hold& hold) override;
  void hold_gone(const key& which) override;
  void watchdog_hold_added() override;

  void schedule(std::chrono::milliseconds delay);
  void tick();
  void renewed(const std::vector<std::pair<key, std::uint64_t>>& batch, clock::time_point sent,
               std::error_code error, const std::vector<long long>& results, const std::string& unsynced);
  void lose(const key& which, std::error_code cause, const std::string& why);
  // Tells the observer how a renewal batch sent at `sent` was answered (and
  // the log when too few replicas acknowledged it: `unsynced` says why).
  void report(const std::string& node, std::size_t count, clock::time_point sent, std::error_code error,
              const std::vector<long long>& results, const std::string& unsynced) const;

  ClientCore& client_;
  HoldBook& book_;
  std::map<key, TimerQueue::id> expiries_;  // fixed-lease holds: when their lease runs out
  TimerQueue::id timer_ = 0;
  clock::time_point timer_at_{};
  bool stopped_ = false;
};

}  // namespace warden::detail
