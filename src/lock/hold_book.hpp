// The book of holds: which holds of which locks this client has, per lock and
// owner, each re-entrant level in watchdog or fixed-lease mode, up to when the
// server confirmed them valid, and where their renewal stands. One book per
// client, owned by its ClientCore. Lock cores record acquires, releases and
// lease changes in it; queries (valid_until, RedLock's confirmations) read it
// from any thread; the Watchdog renews what it says is due and is told when a
// hold changes or goes, to time the expiry of fixed leases.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <warden/thread_id.hpp>

#include "io/timer_queue.hpp"

namespace warden::detail {

class LockCore;

class HoldBook {
 public:
  using milliseconds = std::chrono::milliseconds;
  using key = std::pair<const LockCore*, thread_id>;

  // The holds of one owner on one lock.
  struct Hold {
    std::shared_ptr<LockCore> lock;
    std::vector<bool> renewed;  // one entry per re-entrant hold: watchdog mode?
    clock::time_point valid_until{};
    clock::time_point confirmed_at{};
    std::uint64_t epoch = 0;  // tells this hold from a later one of the same key
    bool releasing = false;   // the last level's release is on its way: renew no more
    bool renewing = false;    // a renewal of it is in flight
    bool watchdog_mode() const;
  };

  // Keeps the holds alive and times their leases (the Watchdog). Called on the
  // loop thread with the book's mutex held: it must not call back into the book.
  class Keeper {
   public:
    // The hold was added to or changed (mode, valid_until).
    virtual void hold_changed(const key& which, const Hold& hold) = 0;
    // The hold left the book (released, forgotten, lost).
    virtual void hold_gone(const key& which) = 0;
    // A watchdog-mode level was added (called without the mutex held).
    virtual void watchdog_hold_added() = 0;

   protected:
    ~Keeper() = default;
  };

  // `watchdog_lease`: the lease of a watchdog-mode hold (Config::lock_watchdog_timeout).
  explicit HoldBook(milliseconds watchdog_lease) : watchdog_lease_(watchdog_lease) {}
  void set_keeper(Keeper* keeper) { keeper_ = keeper; }

  // ---- what lock cores record; loop thread ----

  // An acquire succeeded. `lease` nullopt: renewed by the watchdog. `sent`: when
  // the acquire was sent, the earliest the server can have started the lease.
  void acquired(const std::shared_ptr<LockCore>& lock, thread_id owner, std::optional<milliseconds> lease,
                clock::time_point sent);
  // Before a release is sent: the lease to leave on the lock should holds
  // remain. When this is the owner's last hold, renewal stops now, so that no
  // renewal can follow the release on the wire.
  milliseconds releasing(const LockCore& lock, thread_id owner);
  // The release's outcome: still held with one hold fewer, fully released, or
  // the server said the owner held nothing.
  void released(const LockCore& lock, thread_id owner, bool freed);
  // Every hold of `owner` now has the fixed `lease`, set at `sent`: no more
  // renewals; they expire by themselves.
  void leased(const LockCore& lock, thread_id owner, milliseconds lease, clock::time_point sent);
  // Forgets the owner's holds (release failed, or the server says it held nothing).
  void forget(const LockCore& lock, thread_id owner);

  // ---- queries ----

  // Whether this client believed `owner` held the lock, or lost it recently:
  // a failed unlock is then "lease expired" rather than "not owner".
  bool knew_of(const LockCore& lock, thread_id owner) const;
  int count(const LockCore& lock, thread_id owner) const;
  // Any thread.
  clock::time_point valid_until(const LockCore& lock, thread_id owner) const;
  // valid_until and when the server last confirmed it (the acquire's or the
  // renewal's reply arrived): RedLock judges its nodes' confirmations in the
  // order they happened. {min, min} when not held. Any thread.
  struct confirmation {
    clock::time_point valid_until = clock::time_point::min();
    clock::time_point at = clock::time_point::min();
  };
  confirmation confirmed(const LockCore& lock, thread_id owner) const;

  // ---- what the Watchdog asks and reports; loop thread ----

  // A watchdog-mode hold due for renewal, marked as renewing.
  struct Due {
    key which;
    std::uint64_t epoch = 0;
    std::shared_ptr<LockCore> lock;
  };
  struct Plan {
    std::vector<Due> due;        // at least half a period old, in book order
    std::vector<key> overdue;    // a renewal still unanswered when the lease it protected ran out
    bool any = false;            // any watchdog-mode hold that is not being released
  };
  // The renewal plan at `now` for holds of `lease` renewed every `period`.
  Plan take_due(clock::time_point now, milliseconds lease, milliseconds period);

  // The answer to one renewal call sent at `sent` for `batch` (keys and the
  // epochs they had). `results` holds 1 (renewed for `lease` from `sent`) or 0
  // (gone) per hold, and is empty when `error` is set. Holds released or
  // re-taken meanwhile are skipped. `unsynced` (Config::replica_sync): too
  // few replicas acknowledged it, so a 1 extends nothing: a failover could
  // bring back the older expiry. It counts as a failed renewal, retried
  // soon, and the hold is lost when its lease runs out unacknowledged.
  struct Renewal {
    std::vector<std::pair<key, std::string>> lost;  // with why
    bool retry = false;                             // a transient failure, lease still left
  };
  Renewal renewed(const std::vector<std::pair<key, std::uint64_t>>& batch, clock::time_point sent, milliseconds lease,
                  std::error_code error, const std::vector<long long>& results, const std::string& unsynced = {});

  // The hold is lost: it leaves the book, and knew_of() still says so until
  // the owner acquires it again or it is forgotten. Returns its lock, or null
  // when the hold was not in the book.
  std::shared_ptr<LockCore> lose(const key& which);

  // Forgets everything (shutdown), without telling the keeper.
  void clear();

 private:
  milliseconds watchdog_lease_;
  Keeper* keeper_ = nullptr;
  mutable std::mutex mutex_;  // guards holds_ and lost_ for readers on other threads
  std::map<key, Hold> holds_;
  std::map<key, std::shared_ptr<LockCore>> lost_;  // kept alive so the key stays unambiguous
  std::uint64_t next_epoch_ = 1;
};

}  // namespace warden::detail
