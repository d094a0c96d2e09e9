// One wait for permits (PermitSource::wait_for_permits: a Semaphore's or a
// PermitExpirableSemaphore's acquire): the I/O of the decisions
// PermitWaitMachine makes. It keeps only its handles to the I/O (the waiter,
// the timer, the attempt being settled).
//
// Every try carries an attempt id: a try that takes permits leaves a mark
// under it for a while, so that a try whose reply was lost can be settled
// (the source's settle script) as taken (kept, or given back when the caller
// has gone) or not taken (and then refused should it still arrive).
#include <fmt/format.h>

#include <algorithm>

#include <warden/error.hpp>

#include "base/cancel_state.hpp"
#include "lock/lock_host.hpp"
#include "lock/lock_random.hpp"
#include "lock/permit_source.hpp"
#include "lock/permit_wait_machine.hpp"
#include "lock/semaphore_wake_policy.hpp"

namespace warden::detail {
namespace {

using machine = PermitWaitMachine;

clock::time_point bound_of(clock::time_point now, std::optional<std::chrono::milliseconds> wait) {
  if (!wait) return clock::time_point::max();
  if (*wait > std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - now)) {
    return clock::time_point::max();
  }
  return now + *wait;
}

class PermitWaitOp final : public std::enable_shared_from_this<PermitWaitOp>,
                           public ChannelListener,
                           private Timer,
                           private ShutdownHook {
 public:
  PermitWaitOp(std::shared_ptr<PermitSource> source, std::optional<std::chrono::milliseconds> wait, cancel_token cancel,
               PermitSource::wait_done done)
      : semaphore_(std::move(source)),
        done_(std::move(done)),
        cancel_(std::move(cancel)),
        machine_(bound_of(clock::now(), wait)) {}

  void start() {
    auto& state = cancel_access::state(cancel_);
    if (state && !state->cancelled()) {
      std::weak_ptr<PermitWaitOp> weak = shared_from_this();
      LockHost* client = &this->client();
      cancel_handle_ = state->add([weak, client] {
        client->post([weak] {
          if (auto self = weak.lock()) self->feed(machine::cancelled{});
        });
      });
    }
    auto node = client().topology().node_for(channel());
    bool subscribed = node && node->subscribed(channel());
    feed(machine::started{clock::now(), state && state->cancelled(), subscribed});
  }

 private:
  LockHost& client() const { return semaphore_->client(); }
  std::string_view channel() const { return semaphore_->channel_text().view(); }
  std::chrono::milliseconds mark_ttl() const {
    auto& config = client().config();
    return config.command_timeout * (config.retry_attempts + 2);
  }
  clock::time_point command_deadline(clock::time_point now) const {
    auto deadline = now + client().config().command_timeout;
    auto bound = machine_.bound();
    // A bounded wait's commands end with it, plus one command's time.
    if (bound != clock::time_point::max() && bound + client().config().command_timeout < deadline) {
      return bound + client().config().command_timeout;
    }
    return deadline;
  }

  void feed(const machine::event& happened) {
    auto todo = machine_.on(happened);
    for (const auto& action : todo) {
      std::visit([this](const auto& step) { perform(step); }, action);
    }
  }

  void perform(const machine::join&) {
    auto self = shared_from_this();
    track_shutdown();
    leave_waiters(false);
    node_ = client().topology().node_for(channel());
    // No node serves the slot now (a cluster mid-failover): count the
    // subscription as ready, so the re-try (routed afresh) decides.
    if (!node_) return feed(machine::ready{clock::now()});
    waiter_ = node_->pubsub().join(semaphore_->channel_text(), *this, semaphore_wake_policy());
    if (machine_.finished()) leave_waiters(false);
  }

  void perform(const machine::leave& step) { leave_waiters(step.pass_wake); }

  void perform(const machine::send_try& step) {
    attempt_ = random_request_id();
    auto call = semaphore_->try_call(attempt_, mark_ttl());
    client().run_script(
        *call.script, std::move(call.keys), std::move(call.args), command_deadline(step.sent), false,
        [self = shared_from_this()](Response&& response) { self->on_try(std::move(response)); }, replica_wait::hold);
  }

  void on_try(Response&& response) {
    auto self = shared_from_this();
    machine::answered answer;
    answer.now = clock::now();
    if (response.outcome_unknown()) {
      answer.kind = machine::answer::lost;
      answer.error = response.error;
      return feed(answer);
    }
    if (response.error) {
      failure_ = response.not_run && !response.unsent
                     ? fmt::format("acquire was not run in time: {}", response.reply.str)
                     : fmt::format("acquire failed: {}", describe_error(response));
      answer.kind = machine::answer::failed;
      answer.error = response.error;
      return feed(answer);
    }
    auto read = response.reply.is_error() ? PermitTry{} : semaphore_->read_try(response.reply);
    if (read.what == PermitTry::kind::bad) {
      failure_ = fmt::format("acquire failed: {}", describe_problem(response.reply, {Reply::kind::integer}));
      answer.kind = machine::answer::failed;
      answer.error =
          response.reply.is_error() ? error_reply_code(response.reply) : make_error_code(errc::protocol_error);
      return feed(answer);
    }
    bool taken = read.what == PermitTry::kind::taken;
    if (taken && !response.replica_shortfall.empty()) {
      failure_ = fmt::format("acquired, but {}; the permits were given back", response.replica_shortfall);
      answer.kind = machine::answer::taken_short;
      answer.error = make_error_code(errc::replica_sync_failed);
      return feed(answer);
    }
    answer.kind = taken ? machine::answer::taken : machine::answer::refused;
    if (read.retry_in) answer.retry_at = answer.now + *read.retry_in;
    feed(answer);
  }

  void perform(const machine::settle& step) {
    auto self = shared_from_this();
    auto call = semaphore_->settle_call(attempt_, step.keep, mark_ttl());
    auto& config = client().config();
    auto deadline = clock::now() + config.command_timeout * (config.retry_attempts + 1);
    // A keeping settle is part of the caller's call: a bounded wait's ends
    // with its commands (bound + command_timeout), as a try's does; unanswered
    // by then, the machine answers the caller and gives back in the background.
    if (step.keep && machine_.bound() != clock::time_point::max()) {
      deadline = std::min(deadline, machine_.bound() + config.command_timeout);
    }
    const bool background = !step.keep && machine_.finished();
    client().run_script(
        *call.script, std::move(call.keys), std::move(call.args), deadline, true,
        [self, background](Response&& response) {
          if (background && !(response.ok() && response.reply.is_integer())) {
            self->client().log(log_level::warning,
                               self->semaphore_->message(fmt::format(
                                   "acquire's reply was lost, and giving back what it may have taken failed ({}); "
                                   "if it took permits, they stay taken",
                                   response.error ? describe_error(response) : response.reply.str)));
          }
          machine::settled settled;
          settled.now = clock::now();
          if (response.ok() && response.reply.is_integer()) {
            settled.kind =
                response.reply.integer == 1 ? machine::settle_answer::taken : machine::settle_answer::not_taken;
          } else {
            settled.kind = machine::settle_answer::failed;
            settled.error = response.error ? response.error : make_error_code(errc::server_error);
            self->failure_ = fmt::format(
                "acquire's reply was lost, and asking whether it took its permits failed ({}); if it did, they "
                "are being given back",
                response.error ? describe_error(response) : response.reply.str);
          }
          self->feed(settled);
        },
        replica_wait::keep);
  }

  void perform(const machine::give_back&) {
    auto self = shared_from_this();
    semaphore_->give_back(attempt_, [self](std::error_code error, const std::string& message) {
      if (error) self->client().log(log_level::warning, message);
      self->feed(machine::given_back{});
    });
  }

  void perform(const machine::park&) {
    // The channel's slot is served elsewhere now (a failover, a resharding):
    // releases are published there.
    if (node_ && client().topology().node_for(channel()) != node_) return feed(machine::node_moved{});
    // No node served the channel when it joined (a cluster mid-failover):
    // join afresh, which re-tries at once, routed afresh (the router holds
    // the try until a master serves the slot, or fails it at its deadline).
    if (waiter_ == 0) return feed(machine::node_moved{});
    if (node_->pubsub().park(channel(), waiter_)) feed(machine::woken{clock::now(), machine::cause::message});
  }

  void perform(const machine::arm_timer& step) {
    if (machine_.finished()) return;
    track_shutdown();
    client().loop().schedule(*this, step.at);
  }

  void perform(const machine::disarm&) { client().loop().cancel(static_cast<Timer&>(*this)); }

  void perform(const machine::finish& step) {
    auto keep = std::move(keep_alive_);
    client().loop().cancel(static_cast<Timer&>(*this));
    if (auto& state = cancel_access::state(cancel_)) state->remove(cancel_handle_);
    leave_waiters(false);
    client().untrack(static_cast<ShutdownHook&>(*this));
    std::string text;
    if (step.result == machine::outcome::failed) {
      if (step.error == errc::cancelled) {
        text = semaphore_->message("the wait was cancelled");
      } else if (step.error == errc::shut_down) {
        text = semaphore_->message("the client shut down");
      } else {
        text = semaphore_->message(failure_.empty() ? step.error.message() : failure_);
      }
    }
    auto done = std::move(done_);
    if (done) done(step.error, step.result == machine::outcome::acquired, attempt_, text);
  }

  void leave_waiters(bool pass_wake) {
    if (waiter_ != 0) node_->pubsub().leave(channel(), waiter_, pass_wake);
    waiter_ = 0;
  }

  // While it may wait with nothing in flight, the client's list and the
  // loop's timer point at it: it keeps itself alive, and shutdown fails it.
  void track_shutdown() {
    if (machine_.finished() || tracked()) return;
    keep_alive_ = shared_from_this();
    client().track(*this);
  }

  void on_shutdown() override {
    auto self = shared_from_this();
    feed(machine::shut_down{});
  }
  void on_ready() override {
    auto self = shared_from_this();
    feed(machine::ready{clock::now()});
  }
  void on_wake(wake_cause why) override {
    auto self = shared_from_this();
    auto cause = why == wake_cause::message     ? machine::cause::message
                 : why == wake_cause::reconnect ? machine::cause::reconnect
                                                : machine::cause::timer;
    feed(machine::woken{clock::now(), cause});
  }
  void on_timer() override {
    auto self = shared_from_this();
    feed(machine::timer_fired{clock::now()});
  }

  std::shared_ptr<PermitSource> semaphore_;
  std::shared_ptr<ServerLinks> node_;  // where it joined the waiters; null while it has not
  std::shared_ptr<PermitWaitOp> keep_alive_;
  PermitSource::wait_done done_;
  cancel_token cancel_;
  machine machine_;
  std::string attempt_;
  std::string failure_;  // why it failed, in words
  std::uint64_t cancel_handle_ = 0;
  std::uint64_t waiter_ = 0;
};

}  // namespace

void PermitSource::wait_for_permits(std::shared_ptr<PermitSource> source, std::optional<milliseconds> wait,
                                    cancel_token cancel, wait_done done) {
  std::make_shared<PermitWaitOp>(std::move(source), wait, std::move(cancel), std::move(done))->start();
}

}  // namespace warden::detail
