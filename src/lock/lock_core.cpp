#include "lock/lock_core.hpp"

#include <fmt/format.h>

#include <optional>
#include <random>

#include <warden/error.hpp>

#include "io/backoff.hpp"
#include "lock/acquire_fsm.hpp"
#include "lock/cancel_state.hpp"
#include "topology/client_core.hpp"
#include "lock/keys.hpp"
#include "lock/lock_events.hpp"
#include "topology/node.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

std::mt19937_64& random_source() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return random;
}

std::string random_request_id() {
  auto& random = random_source();
  return fmt::format("{:016x}{:016x}", random(), random());
}

// An acquire attempt's id: 128 random bits, kept as numbers (an op keeps one
// for as long as it waits) and spelled as 32 hex digits where a key needs it.
struct AttemptId {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  static AttemptId random() {
    auto& random = random_source();
    AttemptId id;
    id.high = random();
    id.low = random();
    return id;
  }
  std::string text() const { return fmt::format("{:016x}{:016x}", high, low); }
};

// Seeds each poller's jitter differently, so that waiters that failed
// together do not retry together.
std::uint64_t random_seed() { return random_source()(); }

// One acquire in progress: performs the steps AcquireFsm decides.
//
// An attempt whose reply is lost (time-out, dropped connection) has an
// unknown outcome. It is settled by a resolve script that answers whether the
// attempt took effect and either keeps it, takes it back, or (when it did not
// take effect) marks the attempt cancelled so that it never can. From the
// attempt until that answer the op holds the owner's lane on the lock, so no
// later command of the same owner on the same lock can run in between and be
// mistaken for, or undone as, this attempt.
class AcquireOp final : public std::enable_shared_from_this<AcquireOp>,
                        public ChannelListener,
                        private Timer,
                        private ShutdownHook {
 public:
  AcquireOp(std::shared_ptr<LockCore> lock, thread_id owner, std::optional<std::chrono::milliseconds> wait,
            std::optional<std::chrono::milliseconds> lease, LockCore::acquire_done done, AcquireOptions options)
      : lock_(std::move(lock)),
        done_(std::move(done)),
        cancel_(std::move(options.cancel)),
        tally_{clock::now()},
        fsm_(tally_.started, wait, client().config().retry_attempts, client().config().lock_watchdog_timeout,
             polling_delays(*lock_)),
        owner_id_(owner),
        lease_(lease.value_or(watchdog_mode)),
        keep_queue_place_(options.keep_queue_place) {
    if (options.on_token) fenced_ = std::make_unique<Fenced>(Fenced{std::move(options.on_token), std::nullopt});
    // A bounded wait answers by its deadline plus one command's time: the
    // last attempt may be sent at the deadline and gets that long to answer.
    if (auto deadline = fsm_.deadline()) bound_ = saturating_add(*deadline, client().config().command_timeout);
    // Most kinds wait on the lock's own channel: share the lock's text rather
    // than keep a copy per waiter. A per-owner channel (fair lock) is the
    // op's own.
    auto wait_on = lock_->wait_channel(owner);
    channel_ = wait_on == lock_->channel() ? lock_->channel_text() : SharedText(wait_on);
  }

  void start() {
    if (auto& state = cancel_access::state(cancel_)) {
      if (state->cancelled()) return finish(make_error_code(errc::cancelled), false, lock_->message("cancelled before it started"));
      // The source may be cancelled on any thread: hop to the I/O thread.
      std::weak_ptr<AcquireOp> weak = shared_from_this();
      ClientCore* client = &this->client();
      cancel_handle_ = state->add([weak, client] {
        client->post([weak] {
          if (auto self = weak.lock()) {
            self->finish(make_error_code(errc::cancelled), false, self->lock_->message("the wait was cancelled"));
          }
        });
      });
    }
    run(fsm_.start());
  }

 private:
  static std::optional<SpinDelays> polling_delays(const LockCore& lock) {
    if (auto* backoff = lock.polling()) return SpinDelays(*backoff, random_seed());
    return std::nullopt;
  }

  ClientCore& client() const { return lock_->client(); }

  // The caller's lease, or nullopt for watchdog mode.
  std::optional<std::chrono::milliseconds> lease() const {
    if (lease_ == watchdog_mode) return std::nullopt;
    return lease_;
  }
  std::chrono::milliseconds lease_ms() const {
    return lease_ == watchdog_mode ? client().config().lock_watchdog_timeout : lease_;
  }
  bool bounded() const { return bound_ != clock::time_point::max(); }

  static clock::time_point saturating_add(clock::time_point at, std::chrono::milliseconds span) {
    if (at > clock::time_point::max() - span) return clock::time_point::max();
    return at + span;
  }

  // A command's deadline: its own time, but never past the caller's bound.
  clock::time_point command_deadline(clock::time_point now) const {
    auto deadline = saturating_add(now, client().config().command_timeout);
    return std::min(deadline, bound_);
  }

  void run(AcquireFsm::decision decision) {
    if (finished_) return;
    switch (decision.next) {
      case AcquireFsm::step::try_acquire: return try_acquire();
      case AcquireFsm::step::subscribe: return subscribe(decision.wait);
      case AcquireFsm::step::sleep: return sleep(decision.wait);
      case AcquireFsm::step::pause: return pause(decision.wait);
      case AcquireFsm::step::back_off: return pause(decision.wait);
      case AcquireFsm::step::read_back: return settle(true);
      case AcquireFsm::step::acquired: return finish({}, true, {});
      case AcquireFsm::step::timed_out: return finish({}, false, {});
      case AcquireFsm::step::failed:
        // Still unsettled: take it back in the background, answer now.
        settle(false);
        return finish(last_error_, false, lock_->message(fmt::format("acquire failed: {}", last_error_.message())));
    }
  }

  void try_acquire() {
    in_flight_ = true;
    poked_ = false;
    auto self = shared_from_this();
    lock_->enter_lane(
        owner_id_, bounded() ? std::optional<clock::time_point>(bound_) : std::nullopt, [self] { self->send_attempt(); },
        [self] {
          self->in_flight_ = false;
          self->finish(make_error_code(errc::timed_out), false,
                       self->lock_->message("acquire timed out waiting for an earlier attempt of the same owner "
                                            "to be settled"));
        });
  }

  void send_attempt() {
    if (finished_) return lock_->leave_lane(owner_id_);
    // The count this owner will have if the attempt takes effect: what
    // settling a lost reply compares against. Inside the lane nothing else
    // of this owner changes it meanwhile.
    expected_count_ = client().holds().count(*lock_, owner_id_) + 1;
    attempt_ = AttemptId::random();
    ++tally_.attempts;
    auto sent = clock::now();
    last_try_sent_ = sent;
    // Past the deadline this attempt is the last one: nothing to wait in line for.
    bool last = fsm_.deadline() && sent >= *fsm_.deadline();
    if (!last) waited_ = true;
    join_before_try(sent);
    auto call = last ? lock_->try_acquire_call(owner_id_, lease_ms()) : lock_->acquire_call(owner_id_, lease_ms());
    call.keys.push_back(keys::acquire_cancel(lock_->name(), attempt_.text()));
    client().run_script(
        *call.script, std::move(call.keys), std::move(call.args), command_deadline(sent), false,
        [self = shared_from_this(), sent](Response&& response) { self->on_acquire(sent, std::move(response)); },
        replica_wait::hold);
  }

  void on_acquire(clock::time_point sent, Response&& response) {
    if (response.outcome_unknown()) {
      // The lane stays held until the attempt is settled.
      last_error_ = response.error;
      if (finished_) return settle(false);
      in_flight_ = false;
      return run(fsm_.unknown());
    }
    if (finished_) {
      // Shut down or given up while the script ran: do not keep what it took.
      if (!response.error && response.reply.is_nil()) return settle(false);
      return lock_->leave_lane(owner_id_);
    }
    in_flight_ = false;
    if (!response.replica_shortfall.empty() && !response.error && !response.reply.is_error()) {
      auto answer = lock_->read_acquire(response.reply);
      if (answer.problem.empty() && answer.acquired) return unsynced(response.replica_shortfall);
    }
    lock_->leave_lane(owner_id_);
    if (response.error == errc::replica_sync_failed) {
      // Not sent: the master has too few replicas attached. It did not run,
      // so it does not count as a failure; the wait goes on.
      sync().problem = "not tried: " + response.detail;
      return after_sync_miss(false);
    }
    if (response.not_run) {
      // Refused (loading, busy, ...) until the command's deadline: it had no
      // effect. Try again while the caller's wait lasts.
      if (clock::now() < bound_) return run(fsm_.woken());
      return finish(response.error, false,
                    lock_->message(fmt::format("the server did not run the acquire in time: {}", response.reply.str)));
    }
    if (response.error) {
      last_error_ = response.error;
      return finish(response.error, false, lock_->message(describe_error(response)));
    }
    if (response.reply.is_error()) {
      if (classify(response.reply) == reply_class::would_deadlock) {
        return finish(make_error_code(errc::would_deadlock), false,
                      lock_->message(error_detail(response.reply)));
      }
      return finish(error_reply_code(response.reply), false,
                    lock_->message(describe_problem(response.reply, {})));
    }
    auto answer = lock_->read_acquire(response.reply);
    if (!answer.problem.empty()) {
      return finish(make_error_code(errc::protocol_error), false, lock_->message(answer.problem));
    }
    if (answer.acquired) {
      acquired_sent_ = sent;
      if (fenced_) fenced_->token = answer.token;
      return run(fsm_.acquired());
    }
    auto decision = fsm_.held(clock::now(), answer.ttl);
    if (decision.next == AcquireFsm::step::sleep && poked_) return run(fsm_.woken());
    run(decision);
  }

  // Asks the server whether the last attempt took effect; `keep`: the caller
  // still wants the lock (keep it if so), else take it back. Runs inside the
  // lane, which it leaves once answered.
  void settle(bool keep) {
    if (keep) in_flight_ = true;
    auto& config = client().config();
    auto call = lock_->resolve_call(owner_id_, expected_count_, lease_ms());
    call.keys.push_back(keys::acquire_cancel(lock_->name(), attempt_.text()));
    call.args.push_back(keep ? "1" : "0");
    // The mark must outlast any late run of the attempt it cancels.
    auto mark_ttl = std::max(lease_ms(), config.command_timeout * (config.retry_attempts + 2));
    call.args.push_back(std::to_string(mark_ttl.count()));
    call.args.push_back(lock_->publish_command());
    auto now = clock::now();
    // A take-back keeps trying (across reconnects: it is idempotent) for as
    // long as what it takes back could still be alive; the owner's later
    // commands on this lock wait for it.
    auto deadline = keep ? command_deadline(now) : saturating_add(now, std::max(config.command_timeout, lease_ms()));
    // A kept hold waits for replicas as the attempt would have.
    client().run_script(
        *call.script, std::move(call.keys), std::move(call.args), deadline, true,
        [self = shared_from_this(), keep](Response&& response) { self->on_settled(keep, std::move(response)); },
        keep ? replica_wait::keep : replica_wait::none);
  }

  // The attempt took the lock but too few replicas acknowledged it: a
  // failover now could hand it to someone else while this caller believes
  // it holds it. Take it back (inside the lane, which the next attempt
  // waits for, never past the caller's bound), then try again or give up.
  void unsynced(const std::string& why) {
    sync().problem = "acquired, but " + why + "; it was taken back";
    sync().taking_back = true;
    settle(false);
    after_sync_miss(true);
  }

  // `ran`: the attempt ran and was not acknowledged (being taken back); else
  // it was refused unsent. AcquireFsm::replica_short decides: a bounded wait
  // tries again while it lasts (replicas that come back within it are worth
  // waiting for), lock() for as long as tries are refused (a failover's new
  // master gets its replicas back) and retry_attempts more times for tries
  // that ran unacknowledged.
  void after_sync_miss(bool ran) {
    if (finished_) return;
    auto& config = client().config();
    auto& miss = sync();
    int misses = tally_.replica_sync_misses++;
    if (!miss.backoff) miss.backoff.emplace(config.retry_backoff_min, config.retry_backoff_max, random_seed());
    auto decision = fsm_.replica_short(clock::now(), ran, miss.backoff->delay(std::min(misses, 16)));
    if (decision.next != AcquireFsm::step::failed) return run(decision);
    miss.failure = fmt::format("{} ({} tr{} in {} ms)", miss.problem, misses + 1, misses == 0 ? "y" : "ies",
                                std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - tally_.started)
                                    .count());
    if (!miss.taking_back) return fail_sync();
    // The answer waits for the take-back, so that the failed call leaves no
    // key behind it; but not past the caller's bound.
    track_shutdown();
    auto guard_at = bounded() ? bound_ : clock::now() + config.command_timeout;
    client().loop().at(guard_at, [self = shared_from_this()] { self->fail_sync(); });
  }

  void fail_sync() {
    finish(make_error_code(errc::replica_sync_failed), false, lock_->message(sync().failure));
  }

  void on_settled(bool keep, Response&& response) {
    auto answer = response.ok() ? lock_->read_settle(response.reply, keep) : std::nullopt;
    bool answered = answer.has_value();
    bool applied = answered && answer->applied;
    if (!keep || finished_) {
      // A take-back, or the caller left while a keeping settle ran: a kept
      // hold must now be given back (the attempt is still the count's last
      // step: the lane is held).
      if (keep && applied) return settle(false);
      if (!answered) {
        client().log(log_level::warning,
                    lock_->message(fmt::format("could not take back an acquire {} ({}); if it took effect, its lease "
                                               "expires by itself",
                                               taking_back() ? "too few replicas acknowledged" : "whose reply was lost",
                                               response.error ? response.error.message() : response.reply.str)));
      }
      lock_->leave_lane(owner_id_);
      if (!keep && taking_back()) {
        sync_->taking_back = false;
        if (!sync_->failure.empty()) fail_sync();
      }
      return;
    }
    in_flight_ = false;
    if (!answered) {
      if (response.error && !response.not_run) {
        last_error_ = response.error;
      } else if (response.reply.is_error() && !response.not_run) {
        last_error_ = make_error_code(errc::server_error);
      }
      if (clock::now() >= bound_) {
        settle(false);
        return finish(last_error_ ? last_error_ : make_error_code(errc::timed_out), false,
                      lock_->message("acquire outcome unknown when the wait ran out; it is being taken back"));
      }
      return run(fsm_.unknown());  // settle again, or give up and take it back
    }
    if (applied && !response.replica_shortfall.empty()) return unsynced(response.replica_shortfall);
    lock_->leave_lane(owner_id_);
    if (applied) {
      acquired_sent_ = last_try_sent_;
      if (fenced_) fenced_->token = answer->token;
    }
    run(fsm_.read_back(clock::now(), applied));
  }

  // From here the op may wait with no command in flight (parked, or on its
  // timer): shutdown must be able to fail it. Before, a command in flight
  // always completes it, and closing the connection fails that command.
  // While tracked the op keeps itself alive: the client's list and the
  // loop's timers only point at it.
  void track_shutdown() {
    if (finished_ || tracked()) return;
    keep_alive_ = shared_from_this();
    client().track(*this);
  }

  void on_shutdown() override {
    auto self = shared_from_this();
    finish(make_error_code(errc::shut_down), false, lock_->message("the client shut down"));
  }

  void subscribe(std::chrono::milliseconds wait) {
    // join() may run on_ready at once and finish the op there: it must
    // outlive this call.
    auto self = shared_from_this();
    track_shutdown();
    arm(wait);
    leave_waiters(false);  // joined where the lock lived before it moved
    node_ = client().topology().node_for(channel_);
    // No node serves the lock's slot right now (a cluster mid-failover): the
    // timer re-tries, which is routed afresh.
    if (!node_) return;
    ready_is_news_ = true;
    waiter_ = node_->pubsub().join(channel_, *this);
    // join() may run on_subscribed at once, and the op may have finished in
    // it (a closed connection fails the re-try synchronously): the waiter
    // would then never be removed.
    if (finished_) leave_waiters(false);
  }

  // A first try on a channel whose subscription is already confirmed on the
  // subscriber this waiter would join (other waiters of this Client keep it)
  // joins before the try is sent. The server took that SUBSCRIBE before it
  // answered it, so before this try runs: an unlock published after the try
  // reaches this waiter, and a lock found held needs no re-try after
  // subscribing; the op sleeps at once. A message that comes while the try
  // is in flight wakes a parked waiter or leaves a permit, which this op's
  // park takes; a reconnect meanwhile wakes it (poked_: re-try after the
  // reply). A channel still subscribing takes the subscribe-and-re-try path.
  void join_before_try(clock::time_point now) {
    if (waiter_ != 0 || fsm_.joined()) return;
    auto node = client().topology().node_for(channel_);
    if (!node || !fsm_.join_before_try(now, node->subscribed(channel_))) return;
    // Tracked, it keeps itself alive for as long as the subscriber points at it.
    track_shutdown();
    node_ = std::move(node);
    // Ready at once (confirmed): nothing to do then; the try is already going.
    ready_is_news_ = false;
    waiter_ = node_->pubsub().join(channel_, *this);
  }

  void leave_waiters(bool pass_wake) {
    if (waiter_ != 0) node_->pubsub().leave(channel_, waiter_, pass_wake);
    waiter_ = 0;
  }

  // ChannelListener: the op is its own waiter on the lock's channel. The
  // subscriber holds it by address (it is tracked, so alive, while joined);
  // a call may finish it, so each keeps it alive until it returns.
  void on_ready() override {
    auto self = shared_from_this();
    if (ready_is_news_) on_subscribed();
  }
  void on_wake(wake_cause why) override {
    auto self = shared_from_this();
    on_woken(why);
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
    // The lock's slot is served by another node than the one joined (a
    // failover or a resharding since): its unlock messages are published
    // there now, so join there. The join re-tries once confirmed.
    if (client().topology().node_for(channel_) != node_) return subscribe(wait);
    if (waiter_ == 0) return arm(wait);
    if (node_->pubsub().park(channel_, waiter_)) {
      tally_.woken(wake_cause::message);  // a wake-up that came while it was not asleep
      return run(fsm_.woken());
    }
    arm(wait);
  }

  // A poller's sleep: a timer of the I/O thread, no subscription, nothing
  // else running for it meanwhile.
  void pause(std::chrono::milliseconds wait) {
    track_shutdown();
    arm(wait);
  }

  void on_woken(wake_cause why) {
    if (finished_) return;
    woken_ = true;
    tally_.woken(why);
    if (in_flight_) {
      poked_ = true;  // the reply in flight may predate the wake-up: re-try after it
      return;
    }
    disarm();
    run(fsm_.woken());
  }

  // The op is its own timer: a parked waiter costs the loop one pointer.
  void arm(std::chrono::milliseconds wait) {
    // A finished op is no longer tracked, so nothing would keep it alive
    // while queued: it never waits again.
    if (finished_) return;
    track_shutdown();  // keeps it alive while armed, and fails it at shutdown
    client().loop().schedule(*this, clock::now() + wait);
  }

  void on_timer() override {
    auto self = shared_from_this();
    if (finished_ || in_flight_) return;
    if (waiter_ != 0) node_->pubsub().unpark(channel_, waiter_);
    tally_.woken(wake_cause::timer);
    run(fsm_.woken());
  }

  void disarm() { client().loop().cancel(static_cast<Timer&>(*this)); }

  void finish(std::error_code error, bool acquired, const std::string& message) {
    if (finished_) return;
    finished_ = true;
    // Let go of itself only once this is done (a caller up the stack holds
    // its own reference where it reads the op afterwards).
    auto keep = std::move(keep_alive_);
    disarm();
    if (auto& state = cancel_access::state(cancel_)) state->remove(cancel_handle_);
    // A waiter that used an unlock message's wake-up and leaves without the
    // lock hands it on, or the others would sleep out the TTL of a free lock.
    leave_waiters(!acquired && woken_);
    client().untrack(static_cast<ShutdownHook&>(*this));
    if (acquired) client().holds().acquired(lock_, owner_id_, lease(), acquired_sent_);
    if (acquired && fenced_ && fenced_->token) fenced_->on_token(*fenced_->token);
    report_acquire(*lock_, owner_id_, tally_, acquired, error);
    // A MultiLock keeps its members' queue places between its attempts.
    std::optional<ScriptCall> give_up;
    if (!acquired && waited_ && !keep_queue_place_) give_up = lock_->give_up_call(owner_id_);
    if (give_up && error != errc::shut_down) return leave_queue(std::move(*give_up), error, message);
    if (give_up) {
      // Shutting down: nothing is waited for any more; the place expires
      // with its deadline should this not get through.
      client().run_script(*give_up->script, std::move(give_up->keys), std::move(give_up->args),
                          clock::now() + client().config().command_timeout, true, [](Response&&) {});
    }
    auto done = std::move(done_);
    done(error, acquired, message);
  }

  // A waiter that ends without the lock leaves the fair queue before its
  // caller hears back (as Redisson's tryLock does): once a try_lock_for()
  // returned false, nobody finds its place still there, holding up those
  // behind it, or left for good if the process exits then. The give-up runs
  // in the owner's lane, so after any attempt of this op still under way,
  // which could otherwise queue the owner again behind the give-up. The
  // caller hears back once the give-up is answered, or when the call's
  // bound (or, for lock(), one command's time) comes first; the give-up
  // then goes on by itself, and a place it fails to remove expires with its
  // deadline.
  void leave_queue(ScriptCall call, std::error_code error, std::string message) {
    auto self = shared_from_this();
    auto answer_by = std::min(bound_, saturating_add(clock::now(), client().config().command_timeout));
    leaving_ = std::make_unique<Leaving>(Leaving{error, std::move(message), 0});
    leaving_->timer = client().loop().at(answer_by, [self] {
      self->leaving_->timer = 0;
      self->answer_after_leaving();
    });
    lock_->enter_lane(
        owner_id_, std::nullopt,
        [self, call = std::move(call)]() mutable {
          auto& client = self->client();
          client.run_script(*call.script, std::move(call.keys), std::move(call.args),
                            clock::now() + client.config().command_timeout, true, [self](Response&&) {
                              self->lock_->leave_lane(self->owner_id_);
                              self->answer_after_leaving();
                            });
        },
        [] {});
  }

  void answer_after_leaving() {
    if (!done_) return;
    if (leaving_->timer != 0) client().loop().cancel(leaving_->timer);
    leaving_->timer = 0;
    auto done = std::move(done_);
    done_ = nullptr;
    done(leaving_->error, false, leaving_->message);
  }

  // Ordered largest first, so that padding costs nothing: a parked waiter
  // is mostly this object.
  std::shared_ptr<LockCore> lock_;
  std::shared_ptr<Node> node_;  // where it joined the waiters; null while it has not
  std::shared_ptr<AcquireOp> keep_alive_;  // set while tracked (track_shutdown)
  LockCore::acquire_done done_;
  cancel_token cancel_;
  std::error_code last_error_;
  AttemptId attempt_;
  AcquireTally tally_;  // for the observer
  AcquireFsm fsm_;
  thread_id owner_id_;
  // The caller's lease, or watchdog_mode (leases are positive).
  static constexpr std::chrono::milliseconds watchdog_mode = std::chrono::milliseconds::min();
  std::chrono::milliseconds lease_;
  SharedText channel_;  // the lock's channel (shared), or the owner's own (fair lock)
  clock::time_point bound_ = clock::time_point::max();  // the caller has its answer by then; max: unbounded
  clock::time_point acquired_sent_{};
  clock::time_point last_try_sent_{};
  std::uint64_t cancel_handle_ = 0;
  std::uint64_t waiter_ = 0;
  long long expected_count_ = 1;
  // FencedLock callers only: the token's listener and the token taken.
  struct Fenced {
    std::function<void(std::int64_t)> on_token;
    std::optional<std::int64_t> token;
  };
  std::unique_ptr<Fenced> fenced_;
  bool keep_queue_place_ = false;
  bool in_flight_ = false;  // an attempt or a keeping settle is queued or running
  bool poked_ = false;
  bool finished_ = false;
  bool waited_ = false;  // an attempt was sent that may have left the owner waiting in line
  bool woken_ = false;   // woken by pub/sub since it last went to sleep
  bool ready_is_news_ = false;  // joined by subscribe(), which re-tries once ready
  // Replica acknowledgement (Config::replica_sync) falling short: made at
  // the first miss, as most acquires never miss and a parked waiter should
  // not carry it.
  struct SyncMiss {
    std::string problem;        // why the last attempt fell short
    std::string failure;        // set: the call fails with it once the take-back is done
    bool taking_back = false;   // a settle(false) of an attempt too few replicas acknowledged
    std::optional<Backoff> backoff;  // between such attempts
  };
  std::unique_ptr<SyncMiss> sync_;
  // The answer held back while the op leaves the fair queue (leave_queue).
  struct Leaving {
    std::error_code error;
    std::string message;
    TimerQueue::id timer = 0;
  };
  std::unique_ptr<Leaving> leaving_;
  SyncMiss& sync() {
    if (!sync_) sync_ = std::make_unique<SyncMiss>();
    return *sync_;
  }
  bool taking_back() const { return sync_ && sync_->taking_back; }
};

}  // namespace

LockCore::LockCore(std::shared_ptr<ClientCore> client, std::string name, bool reentrant)
    : client_(std::move(client)),
      channel_(keys::lock_channel(name)),
      name_at_(static_cast<std::uint32_t>(keys::lock_channel_name_at(name))),
      name_size_(static_cast<std::uint32_t>(name.size())),
      reentrant_(reentrant) {}

LockCore::~LockCore() {
  if (!kind_.empty()) client_->forget_core(*this, kind_);
  delete name_string_.load(std::memory_order_acquire);
}

const std::string& LockCore::name_string() const {
  if (auto* made = name_string_.load(std::memory_order_acquire)) return *made;
  // Two threads may both make one: the first to publish it wins.
  auto fresh = std::make_unique<const std::string>(name());
  const std::string* expected = nullptr;
  if (name_string_.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *expected;
}

const char* LockCore::publish_command() const { return client_->topology().publish_command(); }

std::error_code LockCore::link_problem() const {
  auto node = client_->topology().node_for(name());
  if (!node) return make_error_code(errc::routing_failed);
  return node->commands().ready() ? std::error_code{} : node->commands().pending_error();
}

std::string LockCore::message(std::string_view what) const {
  return lock_message(name(), client_->topology().describe(name()), what);
}

const Script& LockCore::renew_script() const { return scripts::lock_renew; }

ScriptCall LockCore::acquire_call(thread_id owner, milliseconds lease) const {
  return {&scripts::lock_acquire,
          {name_key()},
          {std::to_string(lease.count()), client_->owner(owner), reentrant_ ? "1" : "0"}};
}

AcquireAnswer LockCore::read_acquire(const Reply& reply) const {
  AcquireAnswer answer;
  if (reply_problem(reply, {Reply::kind::nil, Reply::kind::integer})) {
    answer.problem = describe_problem(reply, {Reply::kind::nil, Reply::kind::integer});
    return answer;
  }
  answer.acquired = reply.is_nil();
  answer.ttl = milliseconds{reply.integer};
  return answer;
}

std::optional<SettleAnswer> LockCore::read_settle(const Reply& reply, bool /*keep*/) const {
  if (!reply.is_integer()) return std::nullopt;
  return SettleAnswer{reply.integer == 1, std::nullopt};
}

std::string LockCore::wait_channel(thread_id /*owner*/) const { return channel_key(); }

std::optional<ScriptCall> LockCore::give_up_call(thread_id /*owner*/) const { return std::nullopt; }

ScriptCall LockCore::release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                                  milliseconds latch_ttl) const {
  return {&scripts::lock_release,
          {name_key(), channel_key(), keys::unlock_latch(name(), request_id)},
          {unlock_message(), std::to_string(keep_lease.count()), client_->owner(owner),
           std::to_string(latch_ttl.count()), publish_command()}};
}

ScriptCall LockCore::force_release_call() const {
  // The fair queue's key lets the script refuse a fair lock that has waiters.
  return {&scripts::lock_force_release, {name_key(), channel_key(), keys::fair_queue(name())}, {unlock_message(), publish_command()}};
}

ScriptCall LockCore::resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::lock_resolve_acquire,
          {name_key(), channel_key()},
          {client_->owner(owner), std::to_string(expected), std::to_string(keep_lease.count()), unlock_message()}};
}

void LockCore::write_owner_field(thread_id owner, std::string& out) const { client_->write_owner(owner, out); }

ScriptCall LockCore::set_lease_call(thread_id owner, milliseconds lease) const {
  return {&scripts::lock_set_lease, {name_key()}, {std::to_string(lease.count()), owner_field(owner)}};
}

void LockCore::acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                       acquire_done done, AcquireOptions options) {
  std::make_shared<AcquireOp>(shared_from_this(), owner, wait, lease, std::move(done), std::move(options))->start();
}

void LockCore::give_up(thread_id owner) {
  auto call = give_up_call(owner);
  if (!call) return;
  client_->run_script(*call->script, call->keys, call->args, clock::now() + client_->config().command_timeout, true,
                    [](Response&&) {});
}

void LockCore::enter_lane(thread_id owner, std::optional<clock::time_point> give_up_at,
                          std::function<void()> admitted, std::function<void()> gave_up) {
  Lane* found = find_lane(owner);
  if (!found) {
    lanes_.push_back(Lane{owner, {}});
    return admitted();
  }
  Lane& lane = *found;
  LaneWaiter waiter;
  waiter.id = next_lane_waiter_++;
  waiter.admitted = std::move(admitted);
  waiter.gave_up = std::move(gave_up);
  if (give_up_at) {
    auto self = shared_from_this();
    waiter.timer = client_->loop().at(*give_up_at, [self, owner, id = waiter.id] {
      Lane* found = self->find_lane(owner);
      if (!found) return;
      auto& queue = found->waiting;
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (it->id != id) continue;
        auto gave_up = std::move(it->gave_up);
        queue.erase(it);
        return gave_up();
      }
    });
  }
  lane.waiting.push_back(std::move(waiter));
}

LockCore::Lane* LockCore::find_lane(thread_id owner) {
  for (auto& lane : lanes_) {
    if (lane.owner == owner) return &lane;
  }
  return nullptr;
}

void LockCore::leave_lane(thread_id owner) {
  Lane* found = find_lane(owner);
  if (!found) return;
  auto& lane = *found;
  if (lane.waiting.empty()) {
    lanes_.erase(lanes_.begin() + (found - lanes_.data()));
    // Not `lanes_ = {}`: that assigns an empty list and keeps the storage.
    if (lanes_.empty()) std::vector<Lane>().swap(lanes_);
    return;
  }
  auto next = std::move(lane.waiting.front());
  lane.waiting.pop_front();
  client_->loop().cancel(next.timer);
  next.admitted();
}

void LockCore::release(thread_id owner, release_done done) {
  auto deadline = clock::now() + client_->config().command_timeout;
  auto shared_done = std::make_shared<release_done>(std::move(done));
  auto self = shared_from_this();
  enter_lane(
      owner, deadline, [self, owner, deadline, shared_done] { self->send_release(owner, deadline, std::move(*shared_done)); },
      [self, owner, deadline, shared_done] {
        auto& holds = self->client_->holds();
        bool believed = holds.count(*self, owner) > 0;
        holds.forget(*self, owner);
        auto text = self->message(
            "release timed out waiting for an acquire of the same owner to be settled; the hold is no longer "
            "renewed and expires with its lease");
        if (believed) self->notify_lost(LockLost{self->name_key(), owner, make_error_code(errc::timed_out), text});
        report_release(*self, owner, deadline - self->client_->config().command_timeout,
                       make_error_code(errc::timed_out), false);
        (*shared_done)(make_error_code(errc::timed_out), text);
      });
}

void LockCore::send_release(thread_id owner, clock::time_point deadline, release_done done) {
  auto self = shared_from_this();
  auto& config = client_->config();
  auto keep_lease = client_->holds().releasing(*this, owner);
  // The latch outlives every resend of this release.
  auto latch_ttl = config.command_timeout * (config.retry_attempts + 2);
  auto call = release_call(owner, keep_lease, random_request_id(), latch_ttl);
  // Read only for the observer: no clock read when nobody observes.
  auto sent = client_->observer().on_release ? clock::now() : clock::time_point{};
  client_->run_script(
      *call.script, std::move(call.keys), std::move(call.args), deadline, true,
      [self, owner, sent, done = std::move(done)](Response&& response) {
        self->leave_lane(owner);
        auto& holds = self->client_->holds();
        // A hold the book still vouched for: its failed release is news to
        // the listeners. One it had reported lost was told already.
        bool believed = holds.count(*self, owner) > 0;
        auto failed = [&](std::error_code error, const std::string& text) {
          holds.forget(*self, owner);
          auto finish = [self, owner, sent, believed, error, text, done] {
            if (believed) self->notify_lost(LockLost{self->name_key(), owner, error, text});
            report_release(*self, owner, sent, error, false);
            done(error, text);
          };
          // Listeners run on the I/O thread, and before the release reports
          // back: an unlock() that read this answer itself hands it all over.
          if (believed && self->client_->loop().led_here() && self->client_->post(finish)) return;
          finish();
        };
        if (response.error) {
          return failed(response.error, self->message(fmt::format("release of {} failed, the hold is no longer "
                                                                  "renewed and expires with its lease: {}",
                                                                  self->client_->owner(owner),
                                                                  response.error.message())));
        }
        if (auto problem = reply_problem(response.reply, {Reply::kind::nil, Reply::kind::integer})) {
          return failed(problem, self->message(fmt::format(
                                     "release of {} failed: {}", self->client_->owner(owner),
                                     describe_problem(response.reply, {Reply::kind::nil, Reply::kind::integer}))));
        }
        if (response.reply.is_nil()) {
          if (holds.knew_of(*self, owner)) {
            return failed(make_error_code(errc::lease_expired),
                          self->message(fmt::format("owner {} held it, but its lease expired or the key was deleted",
                                                    self->client_->owner(owner))));
          }
          holds.forget(*self, owner);
          report_release(*self, owner, sent, make_error_code(errc::not_owner), false);
          return done(make_error_code(errc::not_owner),
                      self->message(fmt::format("not held by owner {}", self->client_->owner(owner))));
        }
        holds.released(*self, owner, response.reply.integer == 1);
        bool unsynced = !response.replica_shortfall.empty();
        if (unsynced) {
          // Done on the master; a failover before a replica has it could
          // bring the hold back, until its lease runs out.
          self->client_->log(log_level::warning,
                             self->message(fmt::format("released by {}, but {}", self->client_->owner(owner),
                                                       response.replica_shortfall)));
        }
        report_release(*self, owner, sent, {}, response.reply.integer == 1, unsynced);
        done({}, {});
      },
      replica_wait::keep);
}

void LockCore::force_release(std::function<void(std::error_code, bool, const std::string&)> done) {
  auto self = shared_from_this();
  auto call = force_release_call();
  client_->run_script(*call.script, std::move(call.keys), std::move(call.args), clock::now() + client_->config().command_timeout, true,
                    [self, done = std::move(done)](Response&& response) {
                      if (response.error) return done(response.error, false, self->message(response.error.message()));
                      if (auto problem = reply_problem(response.reply, {Reply::kind::integer})) {
                        return done(problem, false,
                                    self->message(describe_problem(response.reply, {Reply::kind::integer})));
                      }
                      if (!response.replica_shortfall.empty()) {
                        self->client_->log(log_level::warning,
                                           self->message("force-released, but " + response.replica_shortfall));
                      }
                      done({}, response.reply.integer == 1, {});
                    },
                    replica_wait::keep);
}

void LockCore::inspect(thread_id owner, std::function<void(std::error_code, Inspection, const std::string&)> done) {
  auto self = shared_from_this();
  client_->run_script(scripts::lock_inspect, {name_key()}, {layout(), owner_field(owner)},
                    clock::now() + client_->config().command_timeout, true,
                    [self, done = std::move(done)](Response&& response) {
                      if (response.error) return done(response.error, {}, self->message(response.error.message()));
                      const auto& reply = response.reply;
                      auto problem = reply_problem(reply, {Reply::kind::array});
                      if (!problem && (reply.elements.size() != 3 || !reply.elements[0].is_integer() ||
                                       !reply.elements[1].is_integer() ||
                                       reply.elements[2].type != Reply::kind::string)) {
                        problem = make_error_code(errc::protocol_error);
                      }
                      if (problem) {
                        return done(problem, {}, self->message(describe_problem(reply, {Reply::kind::array})));
                      }
                      Inspection state;
                      state.pttl = reply.elements[0].integer;
                      state.count = reply.elements[1].integer;
                      state.mode = reply.elements[2].str;
                      done({}, std::move(state), {});
                    });
}

void LockCore::set_lease(thread_id owner, milliseconds lease, std::function<void(std::error_code, bool)> done) {
  auto self = shared_from_this();
  auto call = set_lease_call(owner, lease);
  auto sent = clock::now();
  client_->run_script(*call.script, std::move(call.keys), std::move(call.args), sent + client_->config().command_timeout, true,
                    [self, owner, lease, sent, done = std::move(done)](Response&& response) {
                      if (!response.ok()) {
                        return done(response.error ? response.error : make_error_code(errc::server_error), false);
                      }
                      bool held = response.reply.integer == 1;
                      if (held && !response.replica_shortfall.empty()) {
                        self->client_->log(log_level::warning,
                                           self->message("lease set, but " + response.replica_shortfall));
                      }
                      if (held) self->client_->holds().leased(*self, owner, lease, sent);
                      done({}, held);
                    },
                    replica_wait::keep);
}

std::uint64_t LockCore::add_lost_listener(std::function<void(const LockLost&)> listener) {
  return lost_listeners_.add(std::move(listener));
}

void LockCore::remove_lost_listener(std::uint64_t token) { lost_listeners_.remove(token); }

void LockCore::notify_lost(const LockLost& event) const {
  if (client_->loop().led_here()) {
    // A caller waiting for its own answer read this (its unlock() found the
    // hold gone): listeners run on the I/O thread, which the caller hands
    // the loop to as soon as this is queued.
    if (client_->post([self = shared_from_this(), event] { self->notify_lost(event); })) return;
  }
  client_->log(log_level::warning, event.message);
  report_hold_lost(*this, event.owner, event.cause, event.message);
  lost_listeners_.notify(event, [client = client_](log_level level, const std::string& text) { client->log(level, text); });
}

}  // namespace warden::detail
