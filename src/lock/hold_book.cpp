#include "lock/hold_book.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "io/spare_buckets.hpp"
#include "lock/validity.hpp"

namespace warden::detail {
namespace {

// The wheel's resolution: a period in this many buckets. Each bucket's holds
// go out together, so a finer wheel means smaller bursts of renewals (one
// bucket of 100,000 holds renewed every second is 195 holds, 2 scripts).
constexpr int buckets_per_period = 512;

constexpr char watchdog_level = 'w';
constexpr char fixed_level = 'f';

}  // namespace

std::size_t HoldBook::key_hash::operator()(const key& which) const noexcept {
  auto mixed = reinterpret_cast<std::uintptr_t>(which.first) ^ (which.second * 0x9e3779b97f4a7c15ull);
  return std::hash<std::uint64_t>{}(mixed);
}

HoldBook::HoldBook(milliseconds watchdog_lease)
    : watchdog_lease_(watchdog_lease),
      period_(std::max(watchdog_lease / 3, milliseconds{1})),
      // Due times lie at most a period ahead (a renewed hold is due a period
      // after it was due, a fresh one a period after it was taken); twice
      // that leaves room for a late loop.
      wheel_(std::chrono::duration_cast<clock::duration>(period_) / buckets_per_period,
             std::chrono::duration_cast<clock::duration>(period_) * 2, clock::now()) {}

void HoldBook::file(Hold& hold, clock::time_point due) {
  if (!hold.watchdog_mode() || hold.releasing || hold.renewing) {
    wheel_.remove(hold);
    return;
  }
  // Only an empty wheel's cursor lags (RenewalWheel::catch_up): no clock
  // read per renewed hold.
  if (wheel_.size() == 0) wheel_.catch_up(clock::now());
  wheel_.add(hold, due);
  if (keeper_) keeper_->renewal_filed(due);
}

void HoldBook::erase(hold_map::iterator it) {
  if (it->second.renewing) ++renewing_changes_;
  wheel_.remove(it->second);
  if (keeper_) keeper_->hold_gone(it->first);
  if (it->second.renewing) {
    it->second.retired = true;
    it->second.retired_at = retired_.size();
    retired_.push_back(holds_.extract(it));
  } else {
    holds_.erase(it);
  }
  release_spare_buckets(holds_);
}

HoldBook::Due HoldBook::taken(Hold& hold) {
  hold.renewing = true;
  return Due{&hold, hold.which, hold.epoch, hold.lock.get(), hold.valid_until};
}

bool HoldBook::Hold::watchdog_mode() const { return levels.find(watchdog_level) != std::string::npos; }

std::shared_ptr<LockCore> HoldBook::lose_locked(hold_map::iterator it) {
  auto lock = it->second.lock;
  auto which = it->first;  // erase() destroys the hold and its key
  erase(it);
  lost_[which] = lock;
  return lock;
}

std::shared_ptr<LockCore> HoldBook::drop_lapsed(const key& which, clock::time_point now) {
  auto it = holds_.find(which);
  if (it == holds_.end() || now < it->second.valid_until) return nullptr;
  return lose_locked(it);
}

HoldBook::Entering HoldBook::entering(const LockCore& lock, thread_id owner, clock::time_point now) {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  Entering found;
  found.lapsed = drop_lapsed(which, now);
  auto it = holds_.find(which);
  if (it != holds_.end()) found.levels = static_cast<int>(it->second.levels.size());
  return found;
}

std::shared_ptr<LockCore> HoldBook::acquired(const std::shared_ptr<LockCore>& lock, thread_id owner,
                                             std::optional<milliseconds> lease, clock::time_point sent,
                                             clock::time_point now) {
  key which{lock.get(), owner};
  auto lease_ms = lease.value_or(watchdog_lease_);
  std::shared_ptr<LockCore> lapsed;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    // A lapsed hold's levels are not this acquire's to add to: its key may
    // have expired before the acquire ran and made a fresh hold.
    lapsed = drop_lapsed(which, now);
    lost_.erase(which);
    Hold& hold = holds_[which];
    if (!hold.lock) {
      hold.which = which;
      hold.lock = lock;
      hold.epoch = next_epoch_++;
    }
    hold.levels.push_back(lease ? fixed_level : watchdog_level);
    hold.releasing = false;
    // Every acquire re-sets the key's TTL to its own lease.
    hold.valid_until = sent + lease_ms;
    hold.confirmed_at = clock::now();
    if (keeper_) keeper_->hold_changed(which, hold);
    // A re-entrant level keeps the hold's place in the wheel.
    if (!hold.linked()) file(hold, sent + period_);
  }
  return lapsed;
}

std::chrono::milliseconds HoldBook::releasing(const LockCore& lock, thread_id owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return watchdog_lease_;
  Hold& hold = it->second;
  if (hold.renewing) ++renewing_changes_;
  if (hold.levels.size() <= 1) {
    hold.releasing = true;
    wheel_.remove(hold);
  }
  // The holds that remain keep the lease they were taken with.
  if (hold.levels.size() >= 2 && hold.levels[hold.levels.size() - 2] == fixed_level) {
    auto left = std::chrono::ceil<milliseconds>(hold.valid_until - clock::now());
    return std::max(left, milliseconds{1});
  }
  return watchdog_lease_;
}

void HoldBook::released(const LockCore& lock, thread_id owner, bool freed) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return;
  Hold& hold = it->second;
  if (hold.renewing) ++renewing_changes_;
  if (!hold.levels.empty()) hold.levels.pop_back();
  if (freed || hold.levels.empty()) return erase(it);
  hold.releasing = false;
  if (keeper_) keeper_->hold_changed(it->first, hold);
  // The release left the remaining levels' lease on the key just now.
  if (!hold.linked()) file(hold, clock::now() + period_);
}

void HoldBook::leased(const LockCore& lock, thread_id owner, milliseconds lease, clock::time_point sent) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return;
  Hold& hold = it->second;
  if (hold.renewing) ++renewing_changes_;
  std::fill(hold.levels.begin(), hold.levels.end(), fixed_level);
  hold.valid_until = sent + lease;
  hold.confirmed_at = clock::now();
  wheel_.remove(hold);
  if (keeper_) keeper_->hold_changed(it->first, hold);
}

void HoldBook::forget(const LockCore& lock, thread_id owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  lost_.erase(which);
  auto it = holds_.find(which);
  if (it == holds_.end()) return;
  erase(it);
}

bool HoldBook::knew_of(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  return holds_.count(which) != 0 || lost_.count(which) != 0;
}

int HoldBook::count(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  return it == holds_.end() ? 0 : static_cast<int>(it->second.levels.size());
}

std::vector<HoldBook::Held> HoldBook::held() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<Held> out;
  out.reserve(holds_.size());
  for (const auto& entry : holds_) {
    out.push_back(Held{entry.second.lock, entry.first.second, static_cast<int>(entry.second.levels.size())});
  }
  return out;
}

clock::time_point HoldBook::valid_until(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  return it == holds_.end() ? no_hold_until : it->second.valid_until;
}

HoldBook::confirmation HoldBook::confirmed(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return {};
  return {it->second.valid_until, it->second.confirmed_at};
}

void HoldBook::take_due(clock::time_point now, std::size_t limit, std::vector<Due>& out) {
  std::lock_guard<std::mutex> guard(mutex_);
  wheel_.take(now, limit, [&](RenewalWheel::Link& link) { out.push_back(taken(static_cast<Hold&>(link))); });
}

std::optional<clock::time_point> HoldBook::next_due() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return wheel_.next_due();
}

HoldBook::Renewal HoldBook::renewed(const std::vector<Due>& batch, clock::time_point sent, milliseconds lease,
                                    std::error_code error, const std::vector<long long>& results,
                                    const std::string& unsynced) {
  Renewal outcome;
  auto now = clock::now();
  // Soon, well within what is left of the lease.
  const auto retry_delay = std::clamp(lease / 10, milliseconds{10}, milliseconds{1000});
  // Released holds go once the mutex is let go: a hold may keep the last
  // reference to its lock core, whose destruction runs user code (listeners'
  // captures) that may ask the book.
  std::vector<hold_map::node_type> gone;
  // The holds lie all over the heap: their cache misses overlap when asked
  // for together (with 100,000 holds, most of the answer's cost).
  for (const auto& due : batch) {
    __builtin_prefetch(due.hold);
    __builtin_prefetch(reinterpret_cast<const char*>(due.hold) + 64);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Hold& hold = *batch[i].hold;
    if (hold.retired) {
      // Released meanwhile: this answer is stale, and the hold can go now.
      take_retired(hold, gone);
      continue;
    }
    if (hold.epoch != batch[i].epoch) continue;
    hold.renewing = false;
    if (hold.releasing) continue;
    bool answered = !error && i < results.size();
    if (answered && results[i] != 1) {
      outcome.lost.emplace_back(hold.which, "it was gone or had another owner at renewal");
    } else if (answered && unsynced.empty()) {
      hold.valid_until = std::max(hold.valid_until, sent + lease);
      hold.confirmed_at = now;
      // Due a period after it was due, so the schedule does not drift
      // whether the renewal went out a little late or a little early. A hold
      // taken well ahead to fill a batch (over an eighth of a period) stays
      // with that batch from then on; one that went out late by more than
      // half a period starts afresh.
      auto next = hold.due + period_;
      if (sent < hold.due - period_ / 8 || next < sent + period_ / 2) next = sent + period_;
      file(hold, next);
    } else if (now >= hold.valid_until) {
      outcome.lost.emplace_back(hold.which, fmt::format("no renewal was confirmed for a whole lease ({})",
                                                        answered ? unsynced : error.message()));
    } else {
      outcome.retry = true;
      file(hold, now + retry_delay);
    }
  }
  return outcome;
}

void HoldBook::take_retired(const Hold& hold, std::vector<hold_map::node_type>& gone) {
  // O(1): a search of retired_ per answered hold made a mass release
  // quadratic.
  const std::size_t at = hold.retired_at;
  if (at >= retired_.size() || &retired_[at].mapped() != &hold) return;
  if (at + 1 != retired_.size()) {
    std::swap(retired_[at], retired_.back());
    retired_[at].mapped().retired_at = at;
  }
  gone.push_back(std::move(retired_.back()));
  retired_.pop_back();
  if (retired_.empty()) std::vector<hold_map::node_type>().swap(retired_);  // a burst's storage goes with it
}

void HoldBook::keep_sendable(std::vector<Due>& batch) {
  std::vector<hold_map::node_type> gone;  // destroyed once the mutex is let go (see renewed())
  std::lock_guard<std::mutex> guard(mutex_);
  auto kept = batch.begin();
  for (auto& due : batch) {
    Hold& hold = *due.hold;
    if (hold.retired) {
      take_retired(hold, gone);
      continue;
    }
    if (hold.epoch != due.epoch) continue;
    if (hold.releasing || !hold.watchdog_mode()) {
      // Its final release is on its way, or it now keeps a fixed lease: a
      // renewal sent now would run after that and extend what must not be.
      hold.renewing = false;
      continue;
    }
    *kept++ = due;
  }
  batch.erase(kept, batch.end());
}

std::shared_ptr<LockCore> HoldBook::lose(const key& which) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find(which);
  if (it == holds_.end()) return nullptr;
  return lose_locked(it);  // copies `which` first: it may be the erased hold's own key
}

void HoldBook::clear() {
  // Destroyed after the mutex is let go (see renewed()).
  hold_map holds;
  std::vector<hold_map::node_type> retired;
  std::unordered_map<key, std::shared_ptr<LockCore>, key_hash> lost;
  std::lock_guard<std::mutex> guard(mutex_);
  wheel_.clear();
  holds.swap(holds_);
  retired.swap(retired_);
  lost.swap(lost_);
}

}  // namespace warden::detail
