// The Client's readiness check and its orderly close: what runs on the loop
// thread for Client::wait_until_connected and Client::close.
#include <atomic>
#include <memory>
#include <string>

#include "client/client_core.hpp"
#include "lock/lock_core.hpp"

namespace warden::detail {

void ClientCore::probe(clock::time_point deadline, Topology::probe_done done) {
  // Whichever comes first, the probe's answer or a shutdown, answers; the
  // other finds it answered. A probe waiting for a slot table or a master
  // has no command in flight that a shutdown would fail, hence the ticket.
  struct Once {
    std::atomic<bool> answered{false};
    Topology::probe_done done;
    std::uint64_t ticket = 0;
  };
  auto once = std::make_shared<Once>();
  once->done = std::move(done);
  once->ticket = track([once] {
    if (!once->answered.exchange(true)) once->done(make_error_code(errc::shut_down), "the client is shut down");
  });
  topology_->probe(deadline, [this, once](std::error_code error, const std::string& why) {
    if (once->answered.exchange(true)) return;
    untrack(once->ticket);
    once->done(error, why);
  });
}

// The holds of one round and how their releases went.
struct ClientCore::ReleaseRound {
  std::function<void(bool all)> done;
  std::size_t left = 0;  // holds whose releases are under way
  bool all = true;       // no release failed so far
};

bool ClientCore::release_all(std::function<void(bool all)> done) {
  if (closing_.exchange(true, std::memory_order_acq_rel)) return false;
  auto round = std::make_shared<ReleaseRound>();
  round->done = std::move(done);
  return loop_.post([this, round] { release_round(round); });
}

namespace {

// The releases of one hold, level after level, each once the last was
// answered, as unlock() would send them: the lock's own release script for
// each kind (read holds keep a key per level), with its unlock message to the
// waiters of other clients. `done(failed)` runs once, after the last.
struct LevelReleases : std::enable_shared_from_this<LevelReleases> {
  std::shared_ptr<LockCore> lock;
  thread_id owner = 0;
  int levels = 0;
  std::function<void(bool failed)> done;

  void next() {
    lock->release(owner, [self = shared_from_this()](std::error_code error, const std::string& message) {
      // Not held (any more): released by its owner meanwhile, or lost; the
      // key is not this client's to delete either way.
      bool gone = error == errc::not_owner || error == errc::lease_expired;
      auto& client = self->lock->client();
      if (!error && --self->levels > 0 && client.holds().count(*self->lock, self->owner) > 0) return self->next();
      // Logged as unlock() logs a failed release (the listeners heard of it).
      if (error && !gone) client.log(log_level::warning, message + " (closing the client)");
      self->done(error && !gone);
    });
  }
};

}  // namespace

void ClientCore::release_round(std::shared_ptr<ReleaseRound> round) {
  // Acquires that were parked would take what is released: they fail first.
  // An acquire whose script was in flight may still add a hold, which the
  // next round releases.
  fail_waiters();
  auto held = holds_.held();
  if (held.empty()) return round->done(round->all);
  round->left = held.size();
  for (auto& hold : held) {
    auto releases = std::make_shared<LevelReleases>();
    releases->lock = std::move(hold.lock);
    releases->owner = hold.owner;
    releases->levels = hold.levels;
    releases->done = [this, round](bool failed) {
      if (failed) round->all = false;
      if (--round->left == 0) release_round(round);
    };
    releases->next();
  }
}

}  // namespace warden::detail
