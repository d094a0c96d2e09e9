#include "lock/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include <warden/error.hpp>

#include "topology/client_core.hpp"
#include "lock/lock_core.hpp"
#include "topology/node.hpp"
#include "topology/script.hpp"

namespace warden::detail {

bool Watchdog::Hold::watchdog_mode() const {
  return std::find(renewed.begin(), renewed.end(), true) != renewed.end();
}

void Watchdog::acquired(const std::shared_ptr<LockCore>& lock, thread_id owner,
                        std::optional<std::chrono::milliseconds> lease, clock::time_point sent) {
  key which{lock.get(), owner};
  auto lease_ms = lease.value_or(client_.config().lock_watchdog_timeout);
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
    arm_expiry(which, hold);
  }
  if (!lease) schedule(client_.config().lock_watchdog_timeout / 3);
}

void Watchdog::arm_expiry(const key& which, Hold& hold) {
  // A fixed-lease hold is lost when its lease runs out; a watchdog hold is
  // judged by its renewals instead.
  client_.loop().cancel(hold.expiry);
  hold.expiry = 0;
  if (hold.watchdog_mode()) return;
  hold.expiry = client_.loop().at(hold.valid_until, [this, which] {
    auto it = holds_.find(which);
    if (it == holds_.end()) return;
    it->second.expiry = 0;
    lose(which, make_error_code(errc::lease_expired), "its lease ran out");
  });
}

std::chrono::milliseconds Watchdog::releasing(const LockCore& lock, thread_id owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return client_.config().lock_watchdog_timeout;
  Hold& hold = it->second;
  if (hold.renewed.size() <= 1) hold.releasing = true;
  // The holds that remain keep the lease they were taken with.
  if (hold.renewed.size() >= 2 && !hold.renewed[hold.renewed.size() - 2]) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(hold.valid_until - clock::now());
    return std::max(left, std::chrono::milliseconds{1});
  }
  return client_.config().lock_watchdog_timeout;
}

void Watchdog::released(const LockCore& lock, thread_id owner, bool freed) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return;
  Hold& hold = it->second;
  if (!hold.renewed.empty()) hold.renewed.pop_back();
  if (freed || hold.renewed.empty()) {
    client_.loop().cancel(hold.expiry);
    holds_.erase(it);
    return;
  }
  hold.releasing = false;
  arm_expiry(it->first, hold);
}

void Watchdog::leased(const LockCore& lock, thread_id owner, std::chrono::milliseconds lease, clock::time_point sent) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return;
  Hold& hold = it->second;
  std::fill(hold.renewed.begin(), hold.renewed.end(), false);
  hold.valid_until = sent + lease;
  hold.confirmed_at = clock::now();
  arm_expiry(it->first, hold);
}

void Watchdog::forget(const LockCore& lock, thread_id owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  lost_.erase(which);
  auto it = holds_.find(which);
  if (it == holds_.end()) return;
  client_.loop().cancel(it->second.expiry);
  holds_.erase(it);
}

bool Watchdog::knew_of(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  key which{&lock, owner};
  return holds_.count(which) != 0 || lost_.count(which) != 0;
}

int Watchdog::count(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  return it == holds_.end() ? 0 : static_cast<int>(it->second.renewed.size());
}

clock::time_point Watchdog::valid_until(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  return it == holds_.end() ? clock::time_point::min() : it->second.valid_until;
}

Watchdog::confirmation Watchdog::confirmed(const LockCore& lock, thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find({&lock, owner});
  if (it == holds_.end()) return {};
  return {it->second.valid_until, it->second.confirmed_at};
}

void Watchdog::stop() {
  stopped_ = true;
  client_.loop().cancel(timer_);
  timer_ = 0;
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto& [which, hold] : holds_) client_.loop().cancel(hold.expiry);
  holds_.clear();
  lost_.clear();
}

void Watchdog::schedule(std::chrono::milliseconds delay) {
  if (stopped_) return;
  auto when = clock::now() + delay;
  if (timer_ != 0 && timer_at_ <= when) return;  // an earlier tick is due anyway
  client_.loop().cancel(timer_);
  timer_at_ = when;
  timer_ = client_.loop().at(when, [this] {
    timer_ = 0;
    tick();
  });
}

void Watchdog::tick() {
  const auto lease = client_.config().lock_watchdog_timeout;
  const auto period = lease / 3;
  auto now = clock::now();
  // Batches per node and script: one script call renews up to batch_size holds.
  struct Batch {
    Node* node;
    const Script* script;
    std::vector<std::pair<key, std::uint64_t>> holds;
    std::vector<std::string> keys;
    std::vector<std::string> args;
  };
  std::vector<Batch> batches;
  std::vector<key> overdue;
  bool any = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto& [which, hold] : holds_) {
      if (!hold.watchdog_mode() || hold.releasing) continue;
      any = true;
      if (hold.renewing) {
        // A renewal still unanswered when the lease it was protecting ran out:
        // the server may well have dropped the key by now.
        if (now >= hold.valid_until) overdue.push_back(which);
        continue;
      }
      // One call renews everything due; a hold taken moments ago waits for the
      // next tick (it is then at most 1.5 periods old: half its lease is left).
      if (hold.valid_until - now > lease - period / 2) continue;
      Node* node = &hold.lock->node();
      const Script* script = &hold.lock->renew_script();
      auto batch = std::find_if(batches.begin(), batches.end(), [&](const Batch& b) {
        return b.node == node && b.script == script && b.holds.size() < batch_size;
      });
      if (batch == batches.end()) {
        batches.push_back(Batch{node, script, {}, {}, {std::to_string(lease.count())}});
        batch = std::prev(batches.end());
      }
      hold.renewing = true;
      batch->holds.emplace_back(which, hold.epoch);
      batch->keys.push_back(hold.lock->renew_key());
      batch->args.push_back(hold.lock->renew_arg(which.second));
    }
  }
  for (auto& batch : batches) {
    auto sent = clock::now();
    batch.node->run_script(*batch.script, batch.keys, batch.args, sent + client_.config().command_timeout, true,
                           [this, holds = std::move(batch.holds), sent](Response&& response) {
                             std::vector<long long> results;
                             std::error_code error = response.error;
                             if (!error && response.reply.is_error()) error = make_error_code(errc::server_error);
                             if (!error) {
                               for (auto& element : response.reply.elements) results.push_back(element.integer);
                             }
                             renewed(holds, sent, error, results);
                           });
  }
  for (auto& which : overdue) {
    lose(which, make_error_code(errc::timed_out), "no renewal was confirmed for a whole lease (no reply)");
  }
  if (any) schedule(std::max(period, std::chrono::milliseconds{1}));
}

void Watchdog::renewed(const std::vector<std::pair<key, std::uint64_t>>& batch, clock::time_point sent,
                       std::error_code error, const std::vector<long long>& results) {
  if (stopped_) return;
  const auto lease = client_.config().lock_watchdog_timeout;
  auto now = clock::now();
  std::vector<std::pair<key, std::string>> lost;
  bool retry = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto it = holds_.find(batch[i].first);
      // Released (or re-taken as a new hold) meanwhile: this reply is stale.
      if (it == holds_.end() || it->second.epoch != batch[i].second) continue;
      Hold& hold = it->second;
      hold.renewing = false;
      if (hold.releasing) continue;
      if (!error && i < results.size()) {
        if (results[i] == 1) {
          hold.valid_until = std::max(hold.valid_until, sent + lease);
          hold.confirmed_at = now;
        } else {
          lost.emplace_back(batch[i].first, "it was gone or had another owner at renewal");
        }
      } else if (now >= hold.valid_until) {
        lost.emplace_back(batch[i].first,
                          fmt::format("no renewal was confirmed for a whole lease ({})", error.message()));
      } else {
        retry = true;
      }
    }
  }
  for (auto& [which, why] : lost) lose(which, error && !results.size() ? error : make_error_code(errc::lease_expired), why);
  if (retry) {
    // A transient failure: try again soon, well within what is left of the lease.
    schedule(std::clamp(lease / 10, std::chrono::milliseconds{10}, std::chrono::milliseconds{1000}));
  }
}

void Watchdog::lose(const key& which, std::error_code cause, const std::string& why) {
  std::shared_ptr<LockCore> lock;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = holds_.find(which);
    if (it == holds_.end()) return;
    lock = it->second.lock;
    client_.loop().cancel(it->second.expiry);
    holds_.erase(it);
    lost_[which] = lock;
  }
  LockLost event{lock->name(), which.second, cause,
                 lock->message(fmt::format("hold of {} lost: {}", client_.owner(which.second), why))};
  lock->notify_lost(event);
}

}  // namespace warden::detail
