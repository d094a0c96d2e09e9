#include "lock/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <warden/error.hpp>

#include "lock/lock_core.hpp"
#include "topology/client_core.hpp"
#include "topology/script.hpp"

namespace warden::detail {

Watchdog::Watchdog(ClientCore& client, HoldBook& book) : client_(client), book_(book) { book_.set_keeper(this); }

void Watchdog::hold_changed(const key& which, const HoldBook::Hold& hold) {
  // A fixed-lease hold is lost when its lease runs out; a watchdog hold is
  // judged by its renewals instead.
  hold_gone(which);
  if (hold.watchdog_mode()) return;
  expiries_[which] = client_.loop().at(hold.valid_until, [this, which] {
    if (expiries_.erase(which) == 0) return;
    lose(which, make_error_code(errc::lease_expired), "its lease ran out");
  });
}

void Watchdog::hold_gone(const key& which) {
  auto it = expiries_.find(which);
  if (it == expiries_.end()) return;
  client_.loop().cancel(it->second);
  expiries_.erase(it);
}

void Watchdog::watchdog_hold_added() { schedule(client_.config().lock_watchdog_timeout / 3); }

void Watchdog::stop() {
  stopped_ = true;
  client_.loop().cancel(timer_);
  timer_ = 0;
  for (auto& [which, expiry] : expiries_) client_.loop().cancel(expiry);
  expiries_.clear();
  book_.clear();
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
  auto plan = book_.take_due(clock::now(), lease, period);
  // Batches per group and script: one script call renews up to batch_size
  // holds, and its keys must share a cluster slot (a group), or the server
  // refuses it (CROSSSLOT). One batch failing (a slot mid-failover) leaves
  // the others as they are.
  struct Batch {
    const Script* script;
    std::vector<std::pair<key, std::uint64_t>> holds;
    std::vector<std::string> keys;
    std::vector<std::string> args;
  };
  auto& topology = client_.topology();
  std::vector<Batch> batches;
  std::map<std::pair<std::uint32_t, const Script*>, std::size_t> open;  // the batch still filling, per group
  for (auto& due : plan.due) {
    const Script* script = &due.lock->renew_script();
    auto renew_key = due.lock->renew_key();
    auto [slot, fresh] = open.try_emplace({topology.group_of(renew_key), script}, batches.size());
    if (fresh || batches[slot->second].holds.size() >= batch_size) {
      slot->second = batches.size();
      batches.push_back(Batch{script, {}, {}, {std::to_string(lease.count())}});
    }
    auto& batch = batches[slot->second];
    batch.holds.emplace_back(due.which, due.epoch);
    batch.keys.push_back(std::move(renew_key));
    batch.args.push_back(due.lock->renew_arg(due.which.second));
  }
  auto& hook = client_.observer().on_renewal;
  for (auto& batch : batches) {
    auto sent = clock::now();
    auto node = topology.server_of(batch.keys.front());
    if (hook) {
      RenewalEvent event;
      event.node = node;
      event.phase = renewal_phase::sent;
      event.count = batch.holds.size();
      hook(event);
    }
    client_.run_script(
        *batch.script, batch.keys, batch.args, sent + client_.config().command_timeout, true,
        [this, node = std::move(node), holds = std::move(batch.holds), sent](Response&& response) {
          std::vector<long long> results;
          std::error_code error = response.error;
          if (!error && response.reply.is_error()) error = make_error_code(errc::server_error);
          if (!error) {
            for (auto& element : response.reply.elements) results.push_back(element.integer);
          }
          if (!stopped_) report(node, holds.size(), sent, error, results, response.replica_shortfall);
          renewed(holds, sent, error, results, response.replica_shortfall);
        },
        replica_wait::keep);
  }
  for (auto& which : plan.overdue) {
    lose(which, make_error_code(errc::timed_out), "no renewal was confirmed for a whole lease (no reply)");
  }
  if (plan.any) schedule(std::max(period, std::chrono::milliseconds{1}));
}

void Watchdog::renewed(const std::vector<std::pair<key, std::uint64_t>>& batch, clock::time_point sent,
                       std::error_code error, const std::vector<long long>& results, const std::string& unsynced) {
  if (stopped_) return;
  const auto lease = client_.config().lock_watchdog_timeout;
  auto outcome = book_.renewed(batch, sent, lease, error, results, unsynced);
  for (auto& [which, why] : outcome.lost) {
    lose(which,
         error && !results.size() ? error
         : unsynced.empty()       ? make_error_code(errc::lease_expired)
                                  : make_error_code(errc::replica_sync_failed),
         why);
  }
  if (outcome.retry) {
    // A transient failure: try again soon, well within what is left of the lease.
    schedule(std::clamp(lease / 10, std::chrono::milliseconds{10}, std::chrono::milliseconds{1000}));
  }
}

void Watchdog::report(const std::string& node, std::size_t count, clock::time_point sent, std::error_code error,
                      const std::vector<long long>& results, const std::string& unsynced) const {
  if (!unsynced.empty() && !error) {
    client_.log(log_level::warning, fmt::format("warden: renewal of {} hold{} on {}: {}; valid_until() is not extended",
                                                count, count == 1 ? "" : "s", node, unsynced));
  }
  auto& hook = client_.observer().on_renewal;
  if (!hook) return;
  RenewalEvent event;
  event.node = node;
  event.phase = error ? renewal_phase::failed : renewal_phase::confirmed;
  event.count = count;
  for (auto result : results) ++(result == 1 ? event.renewed : event.gone);
  if (!unsynced.empty()) event.unsynced = event.renewed;
  event.latency = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - sent);
  event.error = error;
  hook(event);
}

void Watchdog::lose(const key& which, std::error_code cause, const std::string& why) {
  auto lock = book_.lose(which);
  if (!lock) return;
  LockLost event{lock->name(), which.second, cause,
                 lock->message(fmt::format("hold of {} lost: {}", client_.owner(which.second), why))};
  lock->notify_lost(event);
}

}  // namespace warden::detail
