// One acquire in progress (LockCore::acquire): the I/O of the decisions
// AcquireMachine makes. It performs each action and feeds back what
// happened; what it keeps beyond the machine is its handles to the I/O (the
// waiter, the timer, the lane, the attempt being settled) and what the
// observer is told.
//
// An attempt whose reply is lost (time-out, dropped connection) has an
// unknown outcome. It is settled by a resolve script that answers whether the
// attempt took effect and either keeps it, takes it back, or (when it did not
// take effect) marks the attempt cancelled so that it never can. From the
// attempt until that answer the op holds the owner's lane on the lock, so no
// later command of the same owner on the same lock can run in between and be
// mistaken for, or undone as, this attempt.
#include <fmt/format.h>

#include <optional>

#include <warden/error.hpp>

#include "base/cancel_state.hpp"
#include "io/backoff.hpp"
#include "lock/acquire_machine.hpp"
#include "lock/keys.hpp"
#include "lock/lock_core.hpp"
#include "lock/lock_events.hpp"
#include "lock/lock_host.hpp"
#include "lock/lock_random.hpp"
#include "lock/wake_policy.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

// An acquire attempt's id: 128 random bits, kept as numbers (an op keeps one
// for as long as it waits) and spelled as 32 hex digits where a key needs it.
struct AttemptId {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  static AttemptId random() {
    auto& random = lock_random();
    AttemptId id;
    id.high = random();
    id.low = random();
    return id;
  }
  std::string text() const { return fmt::format("{:016x}{:016x}", high, low); }
};

using machine = AcquireMachine;

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
        machine_(tally_.started, wait, client().config().retry_attempts, client().config().lock_watchdog_timeout,
                 client().config().command_timeout, options.keep_queue_place, polling_delays(*lock_)),
        owner_id_(owner),
        lease_(lease.value_or(watchdog_mode)) {
    if (options.called && *options.called < tally_.started) queued_for_ = tally_.started - *options.called;
    if (options.on_token) fenced_ = std::make_unique<Fenced>(Fenced{std::move(options.on_token), std::nullopt});
    // Most kinds wait on the lock's own channel: share the lock's text rather
    // than keep a copy per waiter. A per-owner channel (fair lock) is the
    // op's own.
    auto wait_on = lock_->wait_channel(owner);
    channel_ = wait_on == lock_->channel() ? lock_->channel_text() : SharedText(wait_on);
  }

  void start() {
    auto& state = cancel_access::state(cancel_);
    if (state && !state->cancelled()) {
      // The source may be cancelled on any thread: hop to the I/O thread.
      std::weak_ptr<AcquireOp> weak = shared_from_this();
      LockHost* client = &this->client();
      cancel_handle_ = state->add([weak, client] {
        client->post([weak] {
          if (auto self = weak.lock()) self->feed(machine::cancelled{});
        });
      });
    }
    feed(machine::started{state && state->cancelled()});
  }

 private:
  static std::optional<SpinDelays> polling_delays(const LockCore& lock) {
    if (auto* backoff = lock.polling()) return SpinDelays(*backoff, random_seed());
    return std::nullopt;
  }

  LockHost& client() const { return lock_->client(); }

  // The caller's lease, or nullopt for watchdog mode.
  std::optional<std::chrono::milliseconds> lease() const {
    if (lease_ == watchdog_mode) return std::nullopt;
    return lease_;
  }
  std::chrono::milliseconds lease_ms() const {
    return lease_ == watchdog_mode ? client().config().lock_watchdog_timeout : lease_;
  }
  bool bounded() const { return machine_.bound() != clock::time_point::max(); }

  static clock::time_point saturating_add(clock::time_point at, std::chrono::milliseconds span) {
    if (at > clock::time_point::max() - span) return clock::time_point::max();
    return at + span;
  }

  // A command's deadline: its own time, but never past the caller's bound.
  clock::time_point command_deadline(clock::time_point now) const {
    auto deadline = saturating_add(now, client().config().command_timeout);
    return std::min(deadline, machine_.bound());
  }

  // ---- the machine: events in, actions performed ----

  // `response`: the reply the event was read from, for the words of a
  // message (it outlives the actions performed here).
  void feed(const machine::event& happened, const Response* response = nullptr) {
    auto todo = machine_.on(happened);
    for (const auto& action : todo) {
      std::visit([this, response](const auto& step) { perform(step, response); }, action);
    }
  }

  void perform(const machine::enter_lane& step, const Response*) {
    auto self = shared_from_this();
    lock_->enter_lane(
        owner_id_, step.give_up_at, [self] { self->feed(machine::admitted{clock::now()}); },
        [self] { self->feed(machine::lane_timed_out{}); });
  }

  void perform(const machine::leave_lane&, const Response*) { lock_->leave_lane(owner_id_); }

  // A first try on a channel whose subscription is already confirmed on the
  // subscriber this waiter would join (other waiters of this Client keep it)
  // joins before the try is sent. The server took that SUBSCRIBE before it
  // answered it, so before this try runs: an unlock published after the try
  // reaches this waiter, and a lock found held needs no re-try after
  // subscribing; the op sleeps at once. A message that comes while the try
  // is in flight wakes a parked waiter or leaves a permit, which this op's
  // park takes; a reconnect meanwhile wakes it (the machine re-tries after
  // the reply). A channel still subscribing takes the subscribe-and-re-try path.
  void perform(const machine::join_if_subscribed&, const Response*) {
    auto node = client().topology().node_for(channel_);
    if (!node || !node->subscribed(channel_)) return;
    feed(machine::joined_early{});
    // Tracked, it keeps itself alive for as long as the subscriber points at it.
    track_shutdown();
    node_ = std::move(node);
    waiter_ = node_->pubsub().join(channel_, *this, lock_wake_policy());
  }

  void perform(const machine::send_try& step, const Response*) {
    // The count this owner will have if the attempt takes effect: what
    // settling a lost reply compares against. Inside the lane nothing else
    // of this owner changes it meanwhile.
    // A hold whose valid_until has passed is lost, not re-entered
    // (HoldBook::entering).
    auto entering = client().holds().entering(*lock_, owner_id_, clock::now());
    report_lapsed(std::move(entering.lapsed));
    expected_count_ = entering.levels + 1;
    attempt_ = AttemptId::random();
    ++tally_.attempts;
    auto sent = step.sent;
    last_try_sent_ = sent;
    auto call = step.last ? lock_->try_acquire_call(owner_id_, lease_ms()) : lock_->acquire_call(owner_id_, lease_ms());
    call.keys.push_back(keys::acquire_cancel(lock_->name(), attempt_.text()));
    // The first try's command_timeout counts from the call: the time its
    // task waited for the I/O thread is spent (a burst of calls at once).
    auto deadline = command_deadline(sent);
    if (tally_.attempts == 1 && deadline != clock::time_point::max()) deadline -= queued_for_;
    client().run_script(
        *call.script, std::move(call.keys), std::move(call.args), deadline, false,
        [self = shared_from_this(), sent](Response&& response) { self->on_acquire(sent, std::move(response)); },
        replica_wait::hold);
  }

  // Reads what the try's answer means for the machine.
  void on_acquire(clock::time_point sent, Response&& response) {
    machine::answered answer{clock::now(), machine::answer::lost};
    if (response.outcome_unknown()) {
      answer.kind = machine::answer::lost;
      answer.error = response.error;
      return feed(answer, &response);
    }
    answer.nil_reply = !response.error && response.reply.is_nil();
    if (!response.replica_shortfall.empty() && !response.error && !response.reply.is_error()) {
      auto read = lock_->read_acquire(response.reply);
      if (read.problem.empty() && read.acquired) {
        answer.kind = machine::answer::acquired_short;
        answer.delay = sync_miss("acquired, but " + response.replica_shortfall + "; it was taken back");
        return feed(answer, &response);
      }
    }
    if (response.error == errc::replica_sync_failed) {
      answer.kind = machine::answer::refused_short;
      answer.delay = sync_miss("not tried: " + response.detail);
    } else if (response.unsent) {
      // Never written (the link could not have it answered in time): no
      // effect, nothing to settle, and not tried again, which would only
      // add to an overload.
      answer.kind = machine::answer::failed;
      answer.error = response.error;
    } else if (response.not_run) {
      answer.kind = machine::answer::not_run;
      answer.error = response.error;
    } else if (response.error) {
      answer.kind = machine::answer::failed;
      answer.error = response.error;
    } else if (response.reply.is_error()) {
      if (classify(response.reply) == reply_class::would_deadlock) {
        answer.kind = machine::answer::would_deadlock;
      } else {
        answer.kind = machine::answer::error_reply;
        answer.error = error_reply_code(response.reply);
      }
    } else {
      auto read = lock_->read_acquire(response.reply);
      if (!read.problem.empty()) {
        answer.kind = machine::answer::bad_reply;
      } else if (read.acquired) {
        answer.kind = machine::answer::acquired;
        acquired_sent_ = sent;
        if (fenced_) fenced_->token = read.token;
      } else {
        answer.kind = machine::answer::held;
        answer.ttl = read.ttl;
      }
    }
    feed(answer, &response);
  }

  // Asks the server whether the last attempt took effect; `keep`: the caller
  // still wants the lock (keep it if so), else take it back. Runs inside the
  // lane, which the machine leaves once answered.
  // Settles are background work: they wait their turn in the Client's
  // SettleQueue (a paced few in flight), and the deadline starts when sent.
  void perform(const machine::settle& step, const Response*) {
    client().settles().submit([self = shared_from_this(), keep = step.keep] { self->send_settle(keep); });
  }

  void send_settle(bool keep) {
    auto& config = client().config();
    auto call = lock_->resolve_call(owner_id_, expected_count_, lease_ms());
    call.keys.push_back(keys::acquire_cancel(lock_->name(), attempt_.text()));
    call.args.push_back(keep ? "1" : "0");
    call.args.push_back(std::to_string(mark_ttl().count()));
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

  // How long an attempt's mark is kept: it must outlast any late run of the
  // attempt it cancels, or of a settle of it.
  std::chrono::milliseconds mark_ttl() const {
    auto& config = client().config();
    return std::max(lease_ms(), config.command_timeout * (config.retry_attempts + 2));
  }

  // The take-back gave up unanswered: mark the attempt "not taken" (the value
  // settled_before reads so; NX keeps a "taken back" a copy of it set), in
  // the lane. By now a lease has passed since the take-back was sent, so the
  // attempt's own hold has expired: a copy that runs before this finds
  // nothing of the owner's to take back (the owner's next command waits for
  // the lane), and one that runs after finds the mark. Re-sent across
  // reconnects within a command's time, then again while unanswered; a round
  // that fails early is re-sent at its deadline, not in a loop.
  void perform(const machine::mark_given_up&, const Response*) {
    auto now = clock::now();
    if (now < mark_round_ends_) {
      client().loop().at(mark_round_ends_, [self = shared_from_this()] { self->send_mark(); });
      return;
    }
    send_mark();
  }

  void send_mark() {
    auto& config = client().config();
    auto mark = keys::acquire_cancel(lock_->name(), attempt_.text());
    mark_round_ends_ = saturating_add(clock::now(), config.command_timeout);
    Command command{"SET", mark, "1", "NX", "PX", std::to_string(mark_ttl().count())};
    client().send(std::move(command), mark, mark_round_ends_, true, [self = shared_from_this()](Response&& response) {
      // OK, or nil when a mark was there already: either way it is set.
      self->feed(machine::marked{response.ok(), response.error});
    });
  }

  void on_settled(bool keep, Response&& response) {
    client().settles().answered();
    machine::settled settled{clock::now(), keep};
    auto answer = response.ok() ? lock_->read_settle(response.reply, keep) : std::nullopt;
    if (!answer) {
      settled.kind = machine::settle_answer::unanswered;
      if (response.error && !response.not_run) {
        settled.error = response.error;
      } else if (response.reply.is_error() && !response.not_run) {
        settled.error = make_error_code(errc::server_error);
      }
    } else if (!answer->applied) {
      settled.kind = machine::settle_answer::not_applied;
    } else if (keep && !response.replica_shortfall.empty()) {
      settled.kind = machine::settle_answer::applied_short;
      settled.delay = sync_miss("acquired, but " + response.replica_shortfall + "; it was taken back");
    } else {
      settled.kind = machine::settle_answer::applied;
      if (keep) {
        acquired_sent_ = last_try_sent_;
        if (fenced_) fenced_->token = answer->token;
      }
    }
    feed(settled, &response);
  }

  // The owner's earlier hold had lapsed (its valid_until passed) before this
  // acquire counted on it, and no timer had reported it yet: its listeners
  // hear of it as from the watchdog. Posted, so that their code runs outside
  // this op's step.
  void report_lapsed(std::shared_ptr<LockCore> lapsed) {
    if (!lapsed) return;
    LockLost event{lapsed->name_key(), owner_id_, make_error_code(errc::lease_expired),
                   lapsed->message(fmt::format("hold of {} lost: its lease ran out before it was entered again",
                                               client().owner(owner_id_)))};
    client().post([lapsed = std::move(lapsed), event = std::move(event)] { lapsed->notify_lost(event); });
  }

  // A try fell short of Config::replica_sync: why (for the failure's
  // message), and the back-off's next delay.
  std::chrono::milliseconds sync_miss(std::string problem) {
    auto& config = client().config();
    auto& miss = sync();
    miss.problem = std::move(problem);
    int misses = tally_.replica_sync_misses++;
    if (!miss.backoff) miss.backoff.emplace(config.retry_backoff_min, config.retry_backoff_max, random_seed());
    return miss.backoff->delay(std::min(misses, 16));
  }

  void perform(const machine::note_sync_failure&, const Response*) {
    auto& miss = sync();
    int tries = tally_.replica_sync_misses;
    miss.failure =
        fmt::format("{} ({} tr{} in {} ms)", miss.problem, tries, tries == 1 ? "y" : "ies",
                    std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - tally_.started).count());
  }

  void perform(const machine::arm_sync_guard&, const Response*) {
    track_shutdown();
    auto guard_at = bounded() ? machine_.bound() : clock::now() + client().config().command_timeout;
    client().loop().at(guard_at, [self = shared_from_this()] { self->feed(machine::sync_guard_expired{}); });
  }

  void perform(const machine::log_take_back_failed& step, const Response* response) {
    std::string why = response ? (response->error ? response->error.message() : response->reply.str) : std::string();
    client().log(log_level::warning,
                 lock_->message(fmt::format(
                     "could not take back an acquire {} ({}); if it took effect, its lease "
                     "expires by itself",
                     step.short_of_replicas ? "too few replicas acknowledged" : "whose reply was lost", why)));
  }

  // From here the op may wait with no command in flight (parked, or on its
  // timer): shutdown must be able to fail it. Before, a command in flight
  // always completes it, and closing the connection fails that command.
  // While tracked the op keeps itself alive: the client's list and the
  // loop's timers only point at it.
  void track_shutdown() {
    if (machine_.finished() || tracked()) return;
    keep_alive_ = shared_from_this();
    client().track(*this);
  }

  void on_shutdown() override {
    auto self = shared_from_this();
    feed(machine::shut_down{});
  }

  void perform(const machine::subscribe& step, const Response*) {
    // join() may run on_ready at once and finish the op there: it must
    // outlive this call.
    auto self = shared_from_this();
    track_shutdown();
    arm(step.wait);
    leave_waiters(false);  // joined where the lock lived before it moved
    node_ = client().topology().node_for(channel_);
    // No node serves the lock's slot right now (a cluster mid-failover): the
    // timer re-tries, which is routed afresh.
    if (!node_) return;
    waiter_ = node_->pubsub().join(channel_, *this, lock_wake_policy());
    // join() may run on_ready at once, and the op may have finished in it (a
    // closed connection fails the re-try synchronously): the waiter would
    // then never be removed.
    if (machine_.finished()) leave_waiters(false);
  }

  void perform(const machine::park& step, const Response*) {
    // The lock's slot is served by another node than the one joined (a
    // failover or a resharding since): its unlock messages are published
    // there now.
    if (client().topology().node_for(channel_) != node_) return feed(machine::node_moved{step.wait});
    if (waiter_ == 0) return arm(step.wait);
    if (node_->pubsub().park(channel_, waiter_)) return feed(machine::permit_taken{});
    arm(step.wait);
  }

  // A poller's sleep, or a back-off: a timer of the I/O thread, no
  // subscription, nothing else running for it meanwhile.
  void perform(const machine::pause& step, const Response*) {
    track_shutdown();
    arm(step.wait);
  }

  void perform(const machine::disarm&, const Response*) { disarm(); }

  void perform(const machine::unpark&, const Response*) {
    if (waiter_ != 0) node_->pubsub().unpark(channel_, waiter_);
  }

  void perform(const machine::count_wake& step, const Response*) { tally_.woken(step.why); }

  void leave_waiters(bool pass_wake) {
    if (waiter_ != 0) node_->pubsub().leave(channel_, waiter_, pass_wake);
    waiter_ = 0;
  }

  // ChannelListener: the op is its own waiter on the lock's channel. The
  // subscriber holds it by address (it is tracked, so alive, while joined);
  // a call may finish it, so each keeps it alive until it returns.
  void on_ready() override {
    auto self = shared_from_this();
    feed(machine::subscription_ready{});
  }
  void on_wake(wake_cause why) override {
    auto self = shared_from_this();
    feed(machine::woken{why});
  }

  // The op is its own timer: a parked waiter costs the loop one pointer.
  void arm(std::chrono::milliseconds wait) {
    // A finished op is no longer tracked, so nothing would keep it alive
    // while queued: it never waits again.
    if (machine_.finished()) return;
    track_shutdown();  // keeps it alive while armed, and fails it at shutdown
    client().loop().schedule(*this, clock::now() + wait);
  }

  void on_timer() override {
    auto self = shared_from_this();
    feed(machine::timer_fired{});
  }

  void disarm() { client().loop().cancel(static_cast<Timer&>(*this)); }

  std::string describe(const machine::finish& step, const Response* response) {
    using reason = machine::reason;
    switch (step.why) {
      case reason::acquired:
      case reason::timed_out:
        return {};
      case reason::cancelled_before_start:
        return lock_->message("cancelled before it started");
      case reason::cancelled:
        return lock_->message("the wait was cancelled");
      case reason::shut_down:
        return lock_->message("the client shut down");
      case reason::lane_timed_out:
        return lock_->message("acquire timed out waiting for an earlier attempt of the same owner to be settled");
      case reason::failed:
        return lock_->message(fmt::format("acquire failed: {}", step.error.message()));
      case reason::unknown_at_deadline:
        return lock_->message("acquire outcome unknown when the wait ran out; it is being taken back");
      case reason::replica_sync_failed:
        return lock_->message(sync().failure);
      case reason::not_run:
      case reason::transport:
      case reason::would_deadlock:
      case reason::error_reply:
      case reason::bad_reply:
        break;
    }
    if (!response) return lock_->message(step.error.message());
    switch (step.why) {
      case reason::not_run:
        return lock_->message(fmt::format("the server did not run the acquire in time: {}", response->reply.str));
      case reason::transport:
        return lock_->message(describe_error(*response));
      case reason::would_deadlock:
        return lock_->message(error_detail(response->reply));
      case reason::error_reply:
        return lock_->message(describe_problem(response->reply, {}));
      default:
        return lock_->message(lock_->read_acquire(response->reply).problem);
    }
  }

  void perform(const machine::finish& step, const Response* response) {
    auto message = describe(step, response);
    auto error = step.error;
    bool acquired = step.acquired;
    // Let go of itself only once this is done (a caller up the stack holds
    // its own reference where it reads the op afterwards).
    auto keep = std::move(keep_alive_);
    disarm();
    if (auto& state = cancel_access::state(cancel_)) state->remove(cancel_handle_);
    leave_waiters(step.pass_wake);
    client().untrack(static_cast<ShutdownHook&>(*this));
    if (acquired) report_lapsed(client().holds().acquired(lock_, owner_id_, lease(), acquired_sent_));
    if (acquired && fenced_ && fenced_->token) fenced_->on_token(*fenced_->token);
    report_acquire(*lock_, owner_id_, tally_, acquired, error);
    std::optional<ScriptCall> give_up;
    if (step.queue != machine::queue_exit::stay) give_up = lock_->give_up_call(owner_id_);
    if (give_up && step.queue == machine::queue_exit::wait) return leave_queue(std::move(*give_up), error, message);
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
  // caller hears back: once a try_lock_for() returned false, nobody finds its
  // place still there, holding up those behind it, or left for good if the
  // process exits then. The give-up runs in the owner's lane, so after any
  // attempt of this op still under way, which could otherwise queue the
  // owner again behind the give-up. The caller hears back once the give-up
  // is answered, or when the call's bound (or, for lock(), one command's
  // time) comes first; the give-up then goes on by itself, and a place it
  // fails to remove expires with its deadline.
  void leave_queue(ScriptCall call, std::error_code error, std::string message) {
    auto self = shared_from_this();
    auto answer_by = std::min(machine_.bound(), saturating_add(clock::now(), client().config().command_timeout));
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

  // The first of the give-up's answer and the timer answers the caller.
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
  std::shared_ptr<ServerLinks> node_;      // where it joined the waiters; null while it has not
  std::shared_ptr<AcquireOp> keep_alive_;  // set while tracked (track_shutdown)
  LockCore::acquire_done done_;
  cancel_token cancel_;
  AttemptId attempt_;
  AcquireTally tally_;  // for the observer
  AcquireMachine machine_;
  thread_id owner_id_;
  // The caller's lease, or watchdog_mode (leases are positive).
  static constexpr std::chrono::milliseconds watchdog_mode = std::chrono::milliseconds::min();
  std::chrono::milliseconds lease_;
  SharedText channel_;  // the lock's channel (shared), or the owner's own (fair lock)
  clock::time_point acquired_sent_{};
  clock::time_point last_try_sent_{};
  clock::time_point mark_round_ends_{};  // mark_given_up: the deadline of the last SET sent
  std::uint64_t cancel_handle_ = 0;
  std::uint64_t waiter_ = 0;
  long long expected_count_ = 1;
  // FencedLock callers only: the token's listener and the token taken.
  struct Fenced {
    std::function<void(std::int64_t)> on_token;
    std::optional<std::int64_t> token;
  };
  std::unique_ptr<Fenced> fenced_;
  // Replica acknowledgement (Config::replica_sync) falling short: made at
  // the first miss, as most acquires never miss and a parked waiter should
  // not carry it.
  struct SyncMiss {
    std::string problem;             // why the last attempt fell short
    std::string failure;             // the call's failure, once the machine decided it
    std::optional<Backoff> backoff;  // between such attempts
  };
  std::unique_ptr<SyncMiss> sync_;
  // How long the call's task waited for the I/O thread before this op began.
  clock::duration queued_for_{0};
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
};

}  // namespace

void LockCore::acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                       acquire_done done, AcquireOptions options) {
  // Its task waited for the I/O thread for a whole command_timeout (a burst
  // of calls at once, the thread running behind): its first try could only
  // fail unsent. It fails so here, at a fraction of the cost, so that the
  // thread catches up with the calls that can still be answered in time.
  if (options.called) {
    auto now = clock::now();
    auto timeout = client().config().command_timeout;
    if (now - *options.called >= timeout) {
      report_acquire(*this, owner, AcquireTally{*options.called}, false, make_error_code(errc::timed_out));
      done(make_error_code(errc::timed_out), false,
           message(fmt::format("acquire failed: timed out (not sent: the call waited {} ms for the client's I/O "
                               "thread, past its command_timeout of {} ms)",
                               std::chrono::duration_cast<milliseconds>(now - *options.called).count(),
                               timeout.count())));
      return;
    }
  }
  std::make_shared<AcquireOp>(shared_from_this(), owner, wait, lease, std::move(done), std::move(options))->start();
}

}  // namespace warden::detail
