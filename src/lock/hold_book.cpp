#include "lock/hold_book.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace warden::detail {

bool HoldBook::Hold::watchdog_mode() const {
  return std::find(renewed.begin(), renewed.end(), true) != renewed.end();
}

void HoldBook::acquired(const std::shared_ptr<LockCore>& lock, thread_id owner, std::optional<milliseconds> lease,
                        clock::time_point sent) {
  key which{lock.get(), owner};
  auto lease_ms = lease.value_or(watchdog_lease_);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    lost_.erase(which);
    Hold& hold = holds_[which];
    if (!hold.lock) {
      hold.lock = lock;
      hold.epoch = next_epoch_++;
    }
    hold.renewed.push_back(!lease.has_value());
    hold.releasing = false;
    // Every acquire re-sets the key's TTL to its own lease.
    hold.valid_until = sent + lease_ms;
    hold.confirmed_at = clock::now();
    if (keeper_) keeper_->hold_changed(which, hold);
  }
  if (!lease && keeper_) keeper_->watchdog_hold_added();
}

std::chrono::milliseconds HoldBook::releasing(const LockCore& lock, thread_id owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return watchdog_lease_;
  Hold& hold = it->second;
  if (hold.renewed.size() <= 1) hold.releasing = true;
  // The holds that remain keep the lease they were taken with.
  if (hold.renewed.size() >= 2 && !hold.renewed[hold.renewed.size() - 2]) {
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
  if (!hold.renewed.empty()) hold.renewed.pop_back();
  if (freed || hold.renewed.empty()) {
    if (keeper_) keeper_->hold_gone(it->first);
    holds_.erase(it);
    return;
  }
  hold.releasing = false;
  if (keeper_) keeper_->hold_changed(it->first, hold);
}

void HoldBook::leased(const LockCore& lock, thread_id owner, milliseconds lease, clock::time_point sent) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return;
  Hold& hold = it->second;
  std::fill(hold.renewed.begin(), hold.renewed.end(), false);
  hold.valid_until = sent + lease;
  hold.confirmed_at = clock::now();
  if (keeper_) keeper_->hold_changed(it->first, hold);
}

void HoldBook::forget(const LockCore& lock, thread_id owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  lost_.erase(which);
  auto it = holds_.find(which);
  if (it == holds_.end()) return;
  if (keeper_) keeper_->hold_gone(which);
  holds_.erase(it);
}

bool HoldBook::knew_of(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  return holds_.count(which) != 0 || lost_.count(which) != 0;
}

int HoldBook::count(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  return it == holds_.end() ? 0 : static_cast<int>(it->second.renewed.size());
}

clock::time_point HoldBook::valid_until(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  return it == holds_.end() ? clock::time_point::min() : it->second.valid_until;
}

HoldBook::confirmation HoldBook::confirmed(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return {};
  return {it->second.valid_until, it->second.confirmed_at};
}

HoldBook::Plan HoldBook::take_due(clock::time_point now, milliseconds lease, milliseconds period) {
  Plan plan;
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto& [which, hold] : holds_) {
    if (!hold.watchdog_mode() || hold.releasing) continue;
    plan.any = true;
    if (hold.renewing) {
      // A renewal still unanswered when the lease it was protecting ran out:
      // the server may well have dropped the key by now.
      if (now >= hold.valid_until) plan.overdue.push_back(which);
      continue;
    }
    // One call renews everything due; a hold taken moments ago waits for the
    // next tick (it is then at most 1.5 periods old: half its lease is left).
    if (hold.valid_until - now > lease - period / 2) continue;
    hold.renewing = true;
    plan.due.push_back(Due{which, hold.epoch, hold.lock});
  }
  return plan;
}

HoldBook::Renewal HoldBook::renewed(const std::vector<std::pair<key, std::uint64_t>>& batch, clock::time_point sent,
                                    milliseconds lease, std::error_code error, const std::vector<long long>& results,
                                    const std::string& unsynced) {
  Renewal outcome;
  auto now = clock::now();
  std::lock_guard<std::mutex> guard(mutex_);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    auto it = holds_.find(batch[i].first);
    // Released (or re-taken as a new hold) meanwhile: this reply is stale.
    if (it == holds_.end() || it->second.epoch != batch[i].second) continue;
    Hold& hold = it->second;
    hold.renewing = false;
    if (hold.releasing) continue;
    bool answered = !error && i < results.size();
    if (answered && results[i] != 1) {
      outcome.lost.emplace_back(batch[i].first, "it was gone or had another owner at renewal");
    } else if (answered && unsynced.empty()) {
      hold.valid_until = std::max(hold.valid_until, sent + lease);
      hold.confirmed_at = now;
    } else if (now >= hold.valid_until) {
      outcome.lost.emplace_back(batch[i].first, fmt::format("no renewal was confirmed for a whole lease ({})",
                                                            answered ? unsynced : error.message()));
    } else {
      outcome.retry = true;
    }
  }
  return outcome;
}

std::shared_ptr<LockCore> HoldBook::lose(const key& which) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find(which);
  if (it == holds_.end()) return nullptr;
  auto lock = it->second.lock;
  if (keeper_) keeper_->hold_gone(which);
  holds_.erase(it);
  lost_[which] = lock;
  return lock;
}

void HoldBook::clear() {
  std::lock_guard<std::mutex> guard(mutex_);
  holds_.clear();
  lost_.clear();
}

}  // namespace warden::detail
