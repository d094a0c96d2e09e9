#include "lock/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <warden/error.hpp>

#include "io/script.hpp"
#include "lock/lock_core.hpp"
#include "lock/lock_host.hpp"
#include "lock/renewal_pacing.hpp"

namespace warden::detail {

namespace {

// Holds taken from the wheel per loop turn, in batches: a bound on how long
// one turn spends building renewals (about 0.1 ms per batch of 100) before
// the loop serves other callers again. What reaches the server is the
// outbox's to decide (RenewalPacing): a second batch taken with the first
// waits there, encoded, and goes out once the first is answered.
constexpr std::size_t slice_batches = 2;

// How late the most overdue hold of `call` is at `now`: a hold renewed
// with `lease` at valid_until - lease is due a `period` after that.
template <class Call>
std::chrono::nanoseconds lateness(const Call& call, clock::time_point now, std::chrono::milliseconds lease,
                                  std::chrono::milliseconds period) {
  auto earliest = clock::time_point::max();
  for (const auto& hold : call.holds) earliest = std::min(earliest, hold.valid_until);
  if (earliest == clock::time_point::max()) return std::chrono::nanoseconds::min();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now - (earliest - lease + period));
}

// The holds one tick takes, their lock cores and the cores' names lie all
// over the heap: touched one after the other, each is a cache miss the loop
// waits out in turn (with 100,000 holds, most of a renewal's cost). Asked
// for together first, the misses overlap.
void prefetch(const std::vector<HoldBook::Due>& due) {
  for (const auto& hold : due) __builtin_prefetch(hold.lock);
  // The name lies inside the channel's text, often across a cache line from
  // its start (and the header that tells its length).
  for (const auto& hold : due) {
    __builtin_prefetch(hold.lock->channel_text().data());
    __builtin_prefetch(hold.lock->renew_key_front());
    __builtin_prefetch(hold.lock->renew_key_back());
  }
}

// Each hold's owner field as a bulk string, or "" for the same field as the
// hold before it (the renew scripts read it so): holds of one owner often
// come together, and their field is sent once. Within a run of one owner's
// holds of one field family it is not even built.
void append_owner_fields(std::string& out, const std::vector<HoldBook::Due>& holds) {
  std::string field, last_field;
  const void* last_family = nullptr;
  thread_id last_owner = 0;
  for (std::size_t i = 0; i < holds.size(); ++i) {
    const LockCore& lock = *holds[i].lock;
    const void* family = lock.owner_field_family();
    const thread_id owner = holds[i].which.second;
    if (i > 0 && family != nullptr && family == last_family && owner == last_owner) {
      append_bulk(out, {});
      continue;
    }
    last_family = family;
    last_owner = owner;
    lock.write_owner_field(owner, field);
    if (i > 0 && field == last_field) {
      append_bulk(out, {});
    } else {
      append_bulk(out, field);
      last_field = field;
    }
  }
}

}  // namespace

Watchdog::Watchdog(LockHost& client, HoldBook& book)
    : client_(client),
      book_(book),
      batch_size_(static_cast<std::size_t>(std::max(client.config().lock_watchdog_batch_size, 1))) {
  book_.set_keeper(this);
}

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

void Watchdog::renewal_filed(clock::time_point due) { arm(due); }

void Watchdog::stop() {
  stopped_ = true;
  client_.loop().cancel(timer_);
  timer_ = 0;
  for (auto& [which, expiry] : expiries_) client_.loop().cancel(expiry);
  expiries_.clear();
  outboxes_.clear();
  book_.clear();
}

void Watchdog::arm(clock::time_point when) {
  if (stopped_) return;
  if (timer_ != 0 && timer_at_ <= when) return;  // an earlier tick is due anyway
  client_.loop().cancel(timer_);
  timer_at_ = when;
  timer_ = client_.loop().at(when, [this] {
    timer_ = 0;
    tick();
  });
}

void Watchdog::tick() {
  const auto now = clock::now();
  due_.clear();
  book_.take_due(now, slice_batches * batch_size_, due_);
  // Batches per group and script: one script call renews up to batch_size
  // holds, and its keys must share a cluster slot (a group), or the server
  // refuses it (CROSSSLOT). One batch failing (a slot mid-failover) leaves
  // the others as they are.
  struct Batch {
    const Script* script;
    std::uint32_t group;
    std::vector<HoldBook::Due> holds;
    std::string route_key;  // the first key
  };
  auto& topology = client_.topology();
  std::vector<Batch> batches;
  std::map<std::pair<std::uint32_t, const Script*>, std::size_t> open;  // the batch still filling, per group
  // Most holds go with the one before them (one server, one kind of lock):
  // the batch it went to is remembered, and the map asked only on a change.
  std::size_t* last_slot = nullptr;
  std::pair<std::uint32_t, const Script*> last_which{0, nullptr};
  auto add = [&](HoldBook::Due&& hold) {
    const Script* script = &hold.lock->renew_script();
    std::string_view renew_key = hold.lock->renew_key();
    auto group = topology.group_of(renew_key);
    const std::pair<std::uint32_t, const Script*> which{group, script};
    bool fresh = false;
    if (last_slot == nullptr || which != last_which) {
      auto [slot, inserted] = open.try_emplace(which, batches.size());
      last_slot = &slot->second;  // a map's values stay put
      last_which = which;
      fresh = inserted;
    }
    if (fresh || batches[*last_slot].holds.size() >= batch_size_) {
      *last_slot = batches.size();
      batches.push_back(Batch{script, group, {}, std::string(renew_key)});
      batches.back().holds.reserve(batch_size_);  // sized once
    }
    batches[*last_slot].holds.push_back(std::move(hold));
  };
  prefetch(due_);
  for (auto& hold : due_) add(std::move(hold));
  due_.clear();
  // Each group's last batch is topped up with holds of the same script and
  // group due within half a period: renewed a little early, they cost no
  // call of their own, and stay together with the others from then on.
  const auto soon = now + book_.period() / 2;
  for (auto& [which, index] : open) {
    auto& batch = batches[index];
    if (batch.holds.size() >= batch_size_) continue;
    std::vector<HoldBook::Due> extra;
    book_.take_early(
        soon, batch_size_ - batch.holds.size(), 4 * batch_size_,
        [&](const LockCore& lock, thread_id) {
          return &lock.renew_script() == batch.script && topology.group_of(lock.renew_key()) == batch.group;
        },
        extra);
    for (auto& hold : extra) add(std::move(hold));
  }
  const auto changes = book_.renewing_changes();
  for (auto& batch : batches) {
    Outgoing outgoing{batch.script, std::move(batch.route_key), std::move(batch.holds), {}, changes};
    outgoing.call = encode(outgoing);
    post(std::move(outgoing));
  }
  // More due than one slice (a stall, or a burst of holds taken at once): the
  // rest goes out on the next loop turn, after what others have queued. A
  // timer set for holds taken meanwhile would only wake the loop for nothing.
  auto next = book_.next_due();
  if (timer_ != 0 && (!next || timer_at_ < *next)) {
    client_.loop().cancel(timer_);
    timer_ = 0;
  }
  if (next) arm(*next);
}

void Watchdog::post(Outgoing outgoing) {
  auto node = client_.topology().server_of(outgoing.route_key);
  outboxes_[node].waiting.push_back(std::move(outgoing));
  pump(node);
}

void Watchdog::pump(const std::string& node) {
  // A call that fails at once (its handler runs inside send()) comes back
  // here: the loop below goes on instead.
  if (pumping_ || stopped_) return;
  auto it = outboxes_.find(node);
  if (it == outboxes_.end()) return;
  auto& box = it->second;
  pumping_ = true;
  const auto now = clock::now();
  const auto lease = client_.config().lock_watchdog_timeout;
  const auto period = book_.period();
  // Renewal calls unanswered per server (RenewalPacing): a few while
  // renewals keep up, more as they fall behind.
  const std::size_t most = RenewalPacing::most_calls_in_flight(batch_size_);
  while (!stopped_ && box.in_flight < most && !box.waiting.empty()) {
    if (box.in_flight >=
        RenewalPacing::calls_in_flight(lateness(box.waiting.front(), now, lease, period), period, batch_size_)) {
      break;
    }
    Outgoing next = std::move(box.waiting.front());
    box.waiting.pop_front();
    // Released or changed while it waited: not renewed. A call never
    // follows a release of one of its holds on the wire. When no hold taken
    // for renewal has changed since this call's were taken, there is
    // nothing to drop, and its holds (out of the cache by now) stay unread.
    if (next.changes != book_.renewing_changes()) {
      for (const auto& hold : next.holds) __builtin_prefetch(hold.hold);
      const auto taken = next.holds.size();
      book_.keep_sendable(next.holds);
      if (next.holds.empty()) continue;
      if (next.holds.size() != taken) next.call = encode(next);
    }
    ++box.in_flight;
    send(std::move(next), node);
  }
  pumping_ = false;
}

void Watchdog::answered_on(const std::string& node) {
  if (stopped_) return;
  auto it = outboxes_.find(node);
  if (it == outboxes_.end()) return;
  if (it->second.in_flight > 0) --it->second.in_flight;
  pump(node);
}

Command Watchdog::encode(const Outgoing& outgoing) {
  // KEYS: the names; ARGV: the lease, then a field per hold. Names go
  // straight into the call's bytes: no string or argv slot each.
  const std::size_t count = outgoing.holds.size();
  const auto lease = std::to_string(client_.config().lock_watchdog_timeout.count());
  return Command::evalsha(*outgoing.script, 2 + 2 * count, count * (outgoing.route_key.size() + 16) + 64,
                          [&](std::string& out) {
                            append_bulk(out, std::to_string(count));
                            for (const auto& hold : outgoing.holds) append_bulk(out, hold.lock->renew_key());
                            append_bulk(out, lease);
                            append_owner_fields(out, outgoing.holds);
                          });
}

void Watchdog::send(Outgoing outgoing, const std::string& node) {
  auto call = std::move(outgoing.call);
  auto holds = std::move(outgoing.holds);
  auto sent = clock::now();
  auto& hook = client_.observer().on_renewal;
  if (hook) {
    RenewalEvent event;
    event.node = node;
    event.phase = renewal_phase::sent;
    event.count = holds.size();
    hook(event);
  }
  // An answer that comes after the earliest lease in the batch has run out
  // is too late for that hold: waiting for it longer only delays telling
  // its owner. (A lease already over when sent waits the command's time: the
  // server may still have the key, and then the hold is renewed.)
  auto deadline = sent + client_.config().command_timeout;
  for (auto& hold : holds) {
    if (hold.valid_until > sent) deadline = std::min(deadline, hold.valid_until);
  }
  client_.run_script(
      std::move(call), outgoing.route_key, deadline, true,
      [this, node, batch = std::move(holds), sent](Response&& response) {
        std::vector<long long> results;
        std::error_code error = response.error;
        if (!error && response.reply.is_error()) error = make_error_code(errc::server_error);
        if (!error) {
          results.reserve(response.reply.elements.size());
          for (auto& element : response.reply.elements) results.push_back(element.integer);
        }
        if (!stopped_) report(node, batch.size(), sent, error, results, response.replica_shortfall);
        renewed(batch, sent, error, results, response.replica_shortfall);
        answered_on(node);
      },
      replica_wait::keep);
}

void Watchdog::renewed(const std::vector<HoldBook::Due>& batch, clock::time_point sent, std::error_code error,
                       const std::vector<long long>& results, const std::string& unsynced) {
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
  // A transient failure was filed to be tried again soon (HoldBook::renewed).
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
  if (lock) lock->hold_lost(which.second, cause, why);
}

}  // namespace warden::detail
