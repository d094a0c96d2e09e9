// The book of holds: which holds of which locks this client has, per lock and
// owner, each re-entrant level in watchdog or fixed-lease mode, up to when the
// server confirmed them valid, and when each is next due for renewal (a
// RenewalWheel). One book per client, owned by its ClientCore. Lock cores
// record acquires, releases and lease changes in it; queries (valid_until,
// RedLock's confirmations) read it from any thread; the Watchdog renews what
// it says is due and is told when a hold changes or goes, to time the expiry
// of fixed leases, and when a renewal falls due earlier than it planned for.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <warden/thread_id.hpp>

#include "io/timer_queue.hpp"
#include "lock/renewal_wheel.hpp"

namespace warden::detail {

class LockCore;

class HoldBook {
 public:
  using milliseconds = std::chrono::milliseconds;
  using key = std::pair<const LockCore*, thread_id>;

  // The holds of one owner on one lock. Filed in the renewal wheel (by
  // address) while a watchdog-mode hold waits for its next renewal.
  struct Hold : RenewalWheel::Link {
    key which;
    std::shared_ptr<LockCore> lock;
    // One mark per re-entrant hold, oldest first: 'w' renewed by the
    // watchdog, 'f' a fixed lease. A string keeps up to 15 inline.
    std::string levels;
    clock::time_point valid_until{};
    clock::time_point confirmed_at{};
    std::uint64_t epoch = 0;     // tells this hold from a later one of the same key
    bool releasing = false;      // the last level's release is on its way: renew no more
    bool renewing = false;       // a renewal of it is in flight
    bool retired = false;        // out of the book while its renewal was in flight
    std::size_t retired_at = 0;  // its place in retired_ while retired
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
    // A watchdog-mode hold was filed for renewal at `due` (perhaps earlier
    // than anything before it).
    virtual void renewal_filed(clock::time_point due) = 0;

   protected:
    ~Keeper() = default;
  };

  // `watchdog_lease`: the lease of a watchdog-mode hold
  // (Config::lock_watchdog_timeout), renewed every third of it.
  explicit HoldBook(milliseconds watchdog_lease);
  void set_keeper(Keeper* keeper) { keeper_ = keeper; }

  // ---- what lock cores record; loop thread ----

  // What an acquire of `owner` sent at `now` finds in the book: the levels it
  // re-enters (the count a settle of its lost answer compares against, less
  // one), and the lock of a hold it found lapsed. A hold whose valid_until has
  // passed but that no timer has reported lost yet is lost here, as lose()
  // does (the caller tells its listeners): its key may expire before the
  // acquire runs, which then makes a fresh hold of count 1, so the old levels
  // must not be counted (model/lock.pml, drop_lapsed).
  struct Entering {
    int levels = 0;
    std::shared_ptr<LockCore> lapsed;
  };
  Entering entering(const LockCore& lock, thread_id owner, clock::time_point now);
  // An acquire succeeded. `lease` nullopt: renewed by the watchdog. `sent`: when
  // the acquire was sent, the earliest the server can have started the lease.
  // A hold found lapsed at `now` (see entering()) is lost first and the new
  // level starts a hold of its own; its lock is returned for the caller to
  // tell its listeners (null when none lapsed).
  std::shared_ptr<LockCore> acquired(const std::shared_ptr<LockCore>& lock, thread_id owner,
                                     std::optional<milliseconds> lease, clock::time_point sent,
                                     clock::time_point now = clock::now());
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
  // Any thread. no_hold_until (lock/validity.hpp) when the owner holds nothing.
  clock::time_point valid_until(const LockCore& lock, thread_id owner) const;
  // valid_until and when the server last confirmed it (the acquire's or the
  // renewal's reply arrived): RedLock judges its nodes' confirmations in the
  // order they happened. {min, min} when not held. Any thread.
  struct confirmation {
    clock::time_point valid_until = clock::time_point::min();
    clock::time_point at = clock::time_point::min();
  };
  confirmation confirmed(const LockCore& lock, thread_id owner) const;

  // Every hold in the book now, with its number of re-entrant levels
  // (Client::close releases them all). Loop thread.
  struct Held {
    std::shared_ptr<LockCore> lock;
    thread_id owner = 0;
    int levels = 0;
  };
  std::vector<Held> held() const;

  // ---- what the Watchdog asks and reports; loop thread ----

  // The renewal period: a third of the watchdog lease.
  milliseconds period() const { return period_; }

  // A watchdog-mode hold taken for renewal: out of the wheel and marked as
  // renewing until renewed() has its answer. `hold` stays valid until then:
  // a hold that leaves the book meanwhile is kept aside, retired, so the
  // answer needs no lookup by key. `lock` is the hold's: alive while the hold
  // is, so it may be used on the loop thread until control returns to the
  // loop (no release can come in between).
  struct Due {
    Hold* hold = nullptr;
    key which;
    std::uint64_t epoch = 0;
    LockCore* lock = nullptr;
    clock::time_point valid_until{};
  };
  // The holds due at `now` (their wheel bucket has begun), up to `limit`,
  // oldest due first.
  std::vector<Due> take_due(clock::time_point now, std::size_t limit) {
    std::vector<Due> due;
    take_due(now, limit, due);
    return due;
  }
  // The same, appended to `out`: the watchdog keeps one buffer for every tick.
  void take_due(clock::time_point now, std::size_t limit, std::vector<Due>& out);
  // Up to `count` holds due before `until` that `wanted(lock, owner)` picks,
  // looking at no more than `look`, appended to `out`: renewing a hold early
  // to fill a batch costs nothing, and holds renewed together stay together.
  // `wanted` runs with the book's mutex held: it must not call into the book.
  template <class Wanted>
  void take_early(clock::time_point until, std::size_t count, std::size_t look, Wanted&& wanted, std::vector<Due>& out);
  // When the next hold falls due (its bucket's start, perhaps already past);
  // nullopt when no hold waits for renewal.
  std::optional<clock::time_point> next_due() const;

  // The answer to one renewal call sent at `sent` for `batch` (as take_due()
  // and take_early() gave them; loop thread, before clear()). `results` holds 1 (renewed for `lease` from `sent`) or 0
  // (gone) per hold, and is empty when `error` is set. Holds released or
  // re-taken meanwhile are skipped. A renewed hold is due again a period
  // after it was due (or sent, if sent early), so the schedule does not
  // drift by the time renewals take. `unsynced` (Config::replica_sync): too
  // few replicas acknowledged it, so a 1 extends nothing: a failover could
  // bring back the older expiry. It counts as a failed renewal. A hold whose
  // renewal failed while lease is left is due again soon (a tenth of the
  // lease, 10 ms to 1 s); it is lost when its lease runs out unrenewed.
  struct Renewal {
    std::vector<std::pair<key, std::string>> lost;  // with why
    bool retry = false;                             // a transient failure, lease still left
  };
  Renewal renewed(const std::vector<Due>& batch, clock::time_point sent, milliseconds lease, std::error_code error,
                  const std::vector<long long>& results, const std::string& unsynced = {});

  // Drops from a batch taken earlier but not sent yet the holds it must no
  // longer renew: released (their final release may already be on the wire),
  // re-taken, or now on a fixed lease. What take_due() marked stays marked
  // for the holds kept. Loop thread.
  void keep_sendable(std::vector<Due>& batch);
  // How many times a hold taken for renewal has changed so far (released or
  // releasing, re-leased, out of the book). keep_sendable() has nothing to
  // drop from a batch taken when this read the same as now: the watchdog
  // skips reading its holds again, out of the cache after a wait. Loop thread.
  std::uint64_t renewing_changes() const { return renewing_changes_; }

  // The hold is lost: it leaves the book, and knew_of() still says so until
  // the owner acquires it again or it is forgotten. Returns its lock, or null
  // when the hold was not in the book.
  std::shared_ptr<LockCore> lose(const key& which);

  // Forgets everything (shutdown), without telling the keeper.
  void clear();

 private:
  struct key_hash {
    std::size_t operator()(const key& which) const noexcept;
  };
  using hold_map = std::unordered_map<key, Hold, key_hash>;

  // Files `hold` for renewal at `due` when it needs renewing (watchdog mode,
  // not being released, no renewal in flight), else takes it out of the wheel.
  void file(Hold& hold, clock::time_point due);
  // Takes the hold out of the wheel and the book.
  void erase(hold_map::iterator it);
  // lose() with the mutex held; returns the hold's lock.
  std::shared_ptr<LockCore> lose_locked(hold_map::iterator it);
  // The owner's hold, lost at once when its valid_until has passed at `now`
  // (see entering()): returns its lock then, else null.
  std::shared_ptr<LockCore> drop_lapsed(const key& which, clock::time_point now);
  Due taken(Hold& hold);
  // Moves a retired hold out of retired_ into `gone` (destroyed by the caller
  // once the mutex is let go).
  void take_retired(const Hold& hold, std::vector<hold_map::node_type>& gone);

  milliseconds watchdog_lease_;
  milliseconds period_;
  Keeper* keeper_ = nullptr;
  mutable std::mutex mutex_;  // guards holds_, lost_ and wheel_ for readers on other threads
  // Node-based: a hold's address, filed in the wheel, never changes.
  hold_map holds_;
  // Holds that left the book while their renewal was in flight, until its
  // answer: Due::hold points at them. Usually few (those released within a
  // round trip), but a mass release while renewals wait in the watchdog's
  // outbox retires thousands: each finds its own place (Hold::retired_at).
  std::vector<hold_map::node_type> retired_;
  std::unordered_map<key, std::shared_ptr<LockCore>, key_hash> lost_;  // kept alive so the key stays unambiguous
  RenewalWheel wheel_;
  std::uint64_t next_epoch_ = 1;
  std::uint64_t renewing_changes_ = 0;  // see renewing_changes(); changed on the loop thread only
};

template <class Wanted>
void HoldBook::take_early(clock::time_point until, std::size_t count, std::size_t look, Wanted&& wanted,
                          std::vector<Due>& out) {
  std::lock_guard<std::mutex> guard(mutex_);
  wheel_.take_early(until, count, look, [&](RenewalWheel::Link& link) {
    auto& hold = static_cast<Hold&>(link);
    if (!wanted(*hold.lock, hold.which.second)) return false;
    out.push_back(taken(hold));
    return true;
  });
}

}  // namespace warden::detail
