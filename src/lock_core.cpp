#include "lock_core.hpp"

#include <fmt/format.h>

#include <random>

#include <warden/error.hpp>

#include "acquire_fsm.hpp"
#include "client_core.hpp"
#include "keys.hpp"
#include "node.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

constexpr const char* unlock_message = "0";

std::string random_request_id() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", random(), random());
}

bool transport_outcome_unknown(std::error_code error) {
  // The command may have reached the server: its effect is unknown.
  return error == errc::connection_lost || error == errc::timed_out;
}

// One acquire in progress: performs the steps AcquireFsm decides.
class AcquireOp : public std::enable_shared_from_this<AcquireOp> {
 public:
  AcquireOp(std::shared_ptr<LockCore> lock, thread_id owner, std::optional<std::chrono::milliseconds> wait,
            std::optional<std::chrono::milliseconds> lease, LockCore::acquire_done done)
      : lock_(std::move(lock)),
        client_(lock_->client()),
        node_(lock_->node()),
        owner_id_(owner),
        lease_(lease),
        channel_(lock_->wait_channel(owner)),
        fsm_(clock::now(), wait, client_.config().retry_attempts, client_.config().lock_watchdog_timeout),
        done_(std::move(done)) {}

  void start() { run(fsm_.start()); }

 private:
  std::chrono::milliseconds lease_ms() const { return lease_.value_or(client_.config().lock_watchdog_timeout); }

  void run(AcquireFsm::decision decision) {
    if (finished_) return;
    switch (decision.next) {
      case AcquireFsm::step::try_acquire: return try_acquire();
      case AcquireFsm::step::subscribe: return subscribe(decision.wait);
      case AcquireFsm::step::sleep: return sleep(decision.wait);
      case AcquireFsm::step::read_back: return read_back();
      case AcquireFsm::step::acquired: return finish({}, true, {});
      case AcquireFsm::step::timed_out: return finish({}, false, {});
      case AcquireFsm::step::failed:
        undo();
        return finish(last_error_, false, lock_->message(fmt::format("acquire failed: {}", last_error_.message())));
    }
  }

  void try_acquire() {
    in_flight_ = true;
    poked_ = false;
    // The count this owner will have if the acquire takes effect: what a
    // read-back after a lost reply compares against.
    expected_count_ = client_.watchdog().count(*lock_, owner_id_) + 1;
    auto sent = clock::now();
    last_try_sent_ = sent;
    // Past the deadline this attempt is the last one: nothing to wait in line for.
    bool last = fsm_.deadline() && sent >= *fsm_.deadline();
    if (!last) waited_ = true;
    auto call = last ? lock_->try_acquire_call(owner_id_, lease_ms()) : lock_->acquire_call(owner_id_, lease_ms());
    node_.run_script(*call.script, call.keys, call.args, sent + client_.config().command_timeout, false,
                     [self = shared_from_this(), sent](Response&& response) { self->on_acquire(sent, std::move(response)); });
  }

  void on_acquire(clock::time_point sent, Response&& response) {
    in_flight_ = false;
    if (finished_) {
      // Shut down or given up while the script ran: do not keep what it took.
      if (!response.error && response.reply.is_nil()) undo();
      return;
    }
    if (response.error) {
      last_error_ = response.error;
      if (transport_outcome_unknown(response.error)) return run(fsm_.unknown());
      return finish(response.error, false, lock_->message(response.error.message()));
    }
    if (response.reply.is_error()) {
      if (response.reply.str.rfind("WARDEN_WOULD_DEADLOCK", 0) == 0) {
        auto why = response.reply.str.substr(std::string("WARDEN_WOULD_DEADLOCK").size());
        while (!why.empty() && why.front() == ' ') why.erase(0, 1);
        return finish(make_error_code(errc::would_deadlock), false, lock_->message(why));
      }
      return finish(make_error_code(errc::server_error), false, lock_->message(response.reply.str));
    }
    if (response.reply.is_nil()) {
      acquired_sent_ = sent;
      return run(fsm_.acquired());
    }
    auto decision = fsm_.held(clock::now(), std::chrono::milliseconds{response.reply.integer});
    if (decision.next == AcquireFsm::step::sleep && poked_) return run(fsm_.woken());
    run(decision);
  }

  void subscribe(std::chrono::milliseconds wait) {
    // From here the op may wait with no command in flight (parked, or on its
    // timer): shutdown must be able to fail it. Before, a command in flight
    // always completes it, and closing the connection fails that command.
    ticket_ = client_.track([self = shared_from_this()] {
      self->finish(make_error_code(errc::shut_down), false, self->lock_->message("the client shut down"));
    });
    arm(wait);
    auto self = shared_from_this();
    waiter_ = node_.pubsub().join(
        channel_, [self] { self->on_subscribed(); }, [self] { self->on_woken(); });
    // join() may run on_subscribed at once, and the op may have finished in
    // it (a closed connection fails the re-try synchronously): the waiter
    // would then never be removed.
    if (finished_) {
      node_.pubsub().leave(channel_, waiter_, false);
      waiter_ = 0;
    }
  }

  void on_subscribed() {
    if (finished_) return;
    if (in_flight_) {
      poked_ = true;
      return;
    }
    disarm();
    run(fsm_.subscribed());
  }

  void sleep(std::chrono::milliseconds wait) {
    woken_ = false;
    if (node_.pubsub().park(channel_, waiter_)) return run(fsm_.woken());
    arm(wait);
  }

  void on_woken() {
    if (finished_) return;
    woken_ = true;
    if (in_flight_) {
      poked_ = true;  // the reply in flight may predate the wake-up: re-try after it
      return;
    }
    disarm();
    run(fsm_.woken());
  }

  void arm(std::chrono::milliseconds wait) {
    disarm();
    timer_ = client_.loop().after(wait, [self = shared_from_this()] {
      self->timer_ = 0;
      if (self->finished_ || self->in_flight_) return;
      if (self->waiter_ != 0) self->node_.pubsub().unpark(self->channel_, self->waiter_);
      self->run(self->fsm_.woken());
    });
  }

  void disarm() {
    client_.loop().cancel(timer_);
    timer_ = 0;
  }

  void read_back() {
    in_flight_ = true;
    // Sent after the lost acquire: if that one reached the server, it ran first.
    node_.commands().send({"HGET", lock_->name(), lock_->owner_field(owner_id_)}, clock::now() + client_.config().command_timeout, true,
              [self = shared_from_this()](Response&& response) {
                self->in_flight_ = false;
                if (self->finished_) return;
                if (!response.ok()) {
                  auto error = response.error ? response.error : make_error_code(errc::server_error);
                  self->undo();
                  return self->finish(error, false,
                                      self->lock_->message(fmt::format("acquire outcome unknown: {}",
                                                                       response.error ? error.message()
                                                                                      : response.reply.str)));
                }
                long long count = response.reply.is_nil() ? 0 : std::atoll(response.reply.str.c_str());
                bool applied = count == self->expected_count_;
                if (applied) self->acquired_sent_ = self->last_try_sent_;
                self->run(self->fsm_.read_back(clock::now(), applied));
              });
  }

  // Takes back a hold the caller will never know it got. Conditional on the
  // count, so it is harmless when the lost acquire never took effect.
  void undo() {
    auto lock = lock_;
    auto& config = client_.config();
    auto call = lock->undo_call(owner_id_, expected_count_, lease_ms());
    node_.run_script(*call.script, call.keys, call.args, clock::now() + lease_ms(), true,
                     [lock, &config](Response&& response) {
                       if (!response.ok() && config.logger) {
                         config.logger(log_level::warning,
                                       lock->message("could not take back an acquire whose reply was lost; its lease "
                                                     "will expire by itself"));
                       }
                     });
  }

  void finish(std::error_code error, bool acquired, const std::string& message) {
    if (finished_) return;
    finished_ = true;
    disarm();
    // A waiter that used an unlock message's wake-up and leaves without the
    // lock hands it on, or the others would sleep out the TTL of a free lock.
    if (waiter_ != 0) node_.pubsub().leave(channel_, waiter_, !acquired && woken_);
    waiter_ = 0;
    if (ticket_ != 0) client_.untrack(ticket_);
    if (!acquired && waited_) {
      if (auto call = lock_->give_up_call(owner_id_)) {
        node_.run_script(*call->script, call->keys, call->args, clock::now() + client_.config().command_timeout,
                         true, [](Response&&) {});
      }
    }
    if (acquired) client_.watchdog().acquired(lock_, owner_id_, lease_, acquired_sent_);
    auto done = std::move(done_);
    done(error, acquired, message);
  }

  std::shared_ptr<LockCore> lock_;
  ClientCore& client_;
  Node& node_;
  thread_id owner_id_;
  std::optional<std::chrono::milliseconds> lease_;
  std::string channel_;
  AcquireFsm fsm_;
  LockCore::acquire_done done_;
  std::uint64_t ticket_ = 0;
  std::uint64_t waiter_ = 0;
  TimerQueue::id timer_ = 0;
  bool in_flight_ = false;
  bool poked_ = false;
  bool finished_ = false;
  bool waited_ = false;
  bool woken_ = false;  // woken by pub/sub since it last went to sleep  // an attempt was sent that may have left the owner waiting in line
  long long expected_count_ = 1;
  clock::time_point acquired_sent_{};
  clock::time_point last_try_sent_{};
  std::error_code last_error_;
};

}  // namespace

LockCore::LockCore(std::shared_ptr<ClientCore> client, std::string name)
    : client_(std::move(client)), name_(std::move(name)), channel_(keys::lock_channel(name_)) {}

Node& LockCore::node() const { return client_->node_for(name_); }

std::string LockCore::message(std::string_view what) const {
  return lock_message(name_, client_->node_for(name_).server(), what);
}

const Script& LockCore::renew_script() const { return scripts::lock_renew; }

ScriptCall LockCore::acquire_call(thread_id owner, milliseconds lease) const {
  return {&scripts::lock_acquire, {name_}, {std::to_string(lease.count()), client_->owner(owner)}};
}

std::string LockCore::wait_channel(thread_id /*owner*/) const { return channel_; }

std::optional<ScriptCall> LockCore::give_up_call(thread_id /*owner*/) const { return std::nullopt; }

ScriptCall LockCore::release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                                  milliseconds latch_ttl) const {
  return {&scripts::lock_release,
          {name_, channel_, keys::unlock_latch(name_, request_id)},
          {unlock_message, std::to_string(keep_lease.count()), client_->owner(owner), std::to_string(latch_ttl.count())}};
}

ScriptCall LockCore::force_release_call() const { return {&scripts::lock_force_release, {name_, channel_}, {unlock_message}}; }

ScriptCall LockCore::undo_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::lock_undo_acquire,
          {name_, channel_},
          {client_->owner(owner), std::to_string(expected), std::to_string(keep_lease.count()), unlock_message}};
}

std::string LockCore::owner_field(thread_id owner) const { return client_->owner(owner); }

ScriptCall LockCore::set_lease_call(thread_id owner, milliseconds lease) const {
  return {&scripts::lock_set_lease, {name_}, {std::to_string(lease.count()), owner_field(owner)}};
}

void LockCore::acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                       acquire_done done) {
  std::make_shared<AcquireOp>(shared_from_this(), owner, wait, lease, std::move(done))->start();
}

void LockCore::release(thread_id owner, release_done done) {
  auto self = shared_from_this();
  auto& config = client_->config();
  auto keep_lease = client_->watchdog().releasing(*this, owner);
  // The latch outlives every resend of this release.
  auto latch_ttl = config.command_timeout * (config.retry_attempts + 2);
  auto call = release_call(owner, keep_lease, random_request_id(), latch_ttl);
  node().run_script(
      *call.script, call.keys, call.args, clock::now() + config.command_timeout, true,
      [self, owner, done = std::move(done)](Response&& response) {
        auto& watchdog = self->client_->watchdog();
        // A hold the watchdog still vouched for: its failed release is news to
        // the listeners. One it had reported lost was told already.
        bool believed = watchdog.count(*self, owner) > 0;
        auto failed = [&](std::error_code error, const std::string& text) {
          watchdog.forget(*self, owner);
          if (believed) self->notify_lost(LockLost{self->name_, owner, error, text});
          done(error, text);
        };
        if (response.error) {
          return failed(response.error, self->message(fmt::format("release of {} failed, the hold is no longer "
                                                                  "renewed and expires with its lease: {}",
                                                                  self->client_->owner(owner),
                                                                  response.error.message())));
        }
        if (response.reply.is_error()) {
          return failed(make_error_code(errc::server_error),
                        self->message(fmt::format("release of {} failed: {}", self->client_->owner(owner),
                                                  response.reply.str)));
        }
        if (response.reply.is_nil()) {
          if (watchdog.knew_of(*self, owner)) {
            return failed(make_error_code(errc::lease_expired),
                          self->message(fmt::format("owner {} held it, but its lease expired or the key was deleted",
                                                    self->client_->owner(owner))));
          }
          watchdog.forget(*self, owner);
          return done(make_error_code(errc::not_owner),
                      self->message(fmt::format("not held by owner {}", self->client_->owner(owner))));
        }
        watchdog.released(*self, owner, response.reply.integer == 1);
        done({}, {});
      });
}

void LockCore::force_release(std::function<void(std::error_code, bool, const std::string&)> done) {
  auto self = shared_from_this();
  auto call = force_release_call();
  node().run_script(*call.script, call.keys, call.args, clock::now() + client_->config().command_timeout, true,
                    [self, done = std::move(done)](Response&& response) {
                      if (response.error) return done(response.error, false, self->message(response.error.message()));
                      if (response.reply.is_error()) {
                        return done(make_error_code(errc::server_error), false, self->message(response.reply.str));
                      }
                      done({}, response.reply.integer == 1, {});
                    });
}

void LockCore::query(std::vector<std::string> argv, reply_done done) {
  auto self = shared_from_this();
  node().commands().send(std::move(argv), clock::now() + client_->config().command_timeout, true,
                         [self, done = std::move(done)](Response&& response) {
                           if (response.error) return done(response.error, {}, self->message(response.error.message()));
                           if (response.reply.is_error()) {
                             return done(make_error_code(errc::server_error), {}, self->message(response.reply.str));
                           }
                           done({}, std::move(response.reply), {});
                         });
}

void LockCore::set_lease(thread_id owner, milliseconds lease, std::function<void(std::error_code, bool)> done) {
  auto self = shared_from_this();
  auto call = set_lease_call(owner, lease);
  auto sent = clock::now();
  node().run_script(*call.script, call.keys, call.args, sent + client_->config().command_timeout, true,
                    [self, owner, lease, sent, done = std::move(done)](Response&& response) {
                      if (!response.ok()) {
                        return done(response.error ? response.error : make_error_code(errc::server_error), false);
                      }
                      bool held = response.reply.integer == 1;
                      if (held) self->client_->watchdog().leased(*self, owner, lease, sent);
                      done({}, held);
                    });
}

std::uint64_t LockCore::add_lost_listener(std::function<void(const LockLost&)> listener) {
  return lost_listeners_.add(std::move(listener));
}

void LockCore::remove_lost_listener(std::uint64_t token) { lost_listeners_.remove(token); }

void LockCore::notify_lost(const LockLost& event) const {
  client_->log(log_level::warning, event.message);
  lost_listeners_.notify(event, [client = client_](log_level level, const std::string& text) { client->log(level, text); });
}

}  // namespace warden::detail
