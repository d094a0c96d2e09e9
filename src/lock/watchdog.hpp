// Renews every watchdog-mode hold of the book every lease/3, many holds per
// script call, and times the end of fixed-lease holds. What is held is the
// HoldBook's; the watchdog only acts on it, on the loop thread. One timer
// follows the book's renewal wheel: each time it fires it renews the holds
// whose bucket has begun, two batches per loop turn, so renewals are spread
// over the period as the holds were taken, and other callers' commands never
// wait behind a pass over the whole book.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <warden/thread_id.hpp>

#include "io/command.hpp"
#include "io/timer_queue.hpp"
#include "lock/hold_book.hpp"

namespace warden::detail {

class LockHost;
struct Script;

class Watchdog final : private HoldBook::Keeper {
 public:
  // Becomes `book`'s keeper.
  Watchdog(LockHost& client, HoldBook& book);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Stops renewing, cancels every timer and clears the book (shutdown, loop thread).
  void stop();

 private:
  using key = HoldBook::key;

  // HoldBook::Keeper
  void hold_changed(const key& which, const HoldBook::Hold& hold) override;
  void hold_gone(const key& which) override;
  void renewal_filed(clock::time_point due) override;

  // The timer fires at `when` unless it already fires earlier.
  void arm(clock::time_point when);
  // Renews holds now due, one slice.
  void tick();
  // One renewal call's holds (same script, same slot group), encoded when
  // taken, while the holds, their locks and names are in the cache. A call
  // held back for its server (see RenewalPacing) is checked against the book
  // before it is sent, and encoded again if that dropped any of its holds.
  struct Outgoing {
    const Script* script = nullptr;
    std::string route_key;  // the first hold's name
    std::vector<HoldBook::Due> holds;
    Command call;
    std::uint64_t changes = 0;  // HoldBook::renewing_changes() when taken
  };
  // Per server (Topology::server_of): calls sent and unanswered, and those
  // held back.
  struct Outbox {
    std::size_t in_flight = 0;
    std::deque<Outgoing> waiting;
  };
  void post(Outgoing outgoing);
  // Sends what the server's outbox has room for.
  void pump(const std::string& node);
  void answered_on(const std::string& node);
  Command encode(const Outgoing& outgoing);
  void send(Outgoing outgoing, const std::string& node);
  void renewed(const std::vector<HoldBook::Due>& batch, clock::time_point sent, std::error_code error,
               const std::vector<long long>& results, const std::string& unsynced);
  void lose(const key& which, std::error_code cause, const std::string& why);
  // Tells the observer how a renewal batch sent at `sent` was answered (and
  // the log when too few replicas acknowledged it: `unsynced` says why).
  void report(const std::string& node, std::size_t count, clock::time_point sent, std::error_code error,
              const std::vector<long long>& results, const std::string& unsynced) const;

  LockHost& client_;
  HoldBook& book_;
  const std::size_t batch_size_;            // Config::lock_watchdog_batch_size
  std::vector<HoldBook::Due> due_;          // what one tick took from the book; kept for the next tick
  std::map<key, TimerQueue::id> expiries_;  // fixed-lease holds: when their lease runs out
  TimerQueue::id timer_ = 0;
  clock::time_point timer_at_{};
  std::unordered_map<std::string, Outbox> outboxes_;
  bool pumping_ = false;
  bool stopped_ = false;
};

}  // namespace warden::detail
