// One wait on a count-down latch (CountDownLatchCore::wait): the I/O of the
// decisions LatchWaitMachine makes. It keeps only handles to its I/O: the
// node and waiter id it joined, its deadline timer, its cancel callback.
#include <fmt/format.h>

#include <warden/error.hpp>

#include "base/cancel_state.hpp"
#include "lock/count_down_latch_core.hpp"
#include "lock/latch_wait_machine.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {
namespace {

using machine = LatchWaitMachine;

class LatchWaitOp final : public std::enable_shared_from_this<LatchWaitOp>,
                          public ChannelListener,
                          private Timer,
                          private ShutdownHook {
 public:
  LatchWaitOp(std::shared_ptr<CountDownLatchCore> latch, std::optional<std::chrono::milliseconds> wait,
              cancel_token cancel, CountDownLatchCore::done_fn done)
      : latch_(std::move(latch)), wait_(wait), cancel_(std::move(cancel)), done_(std::move(done)) {}

  void start() {
    auto& state = cancel_access::state(cancel_);
    if (state && !state->cancelled()) {
      // The source may be cancelled on any thread: hop to the I/O thread.
      std::weak_ptr<LatchWaitOp> weak = shared_from_this();
      LockHost* client = &this->client();
      cancel_handle_ = state->add([weak, client] {
        client->post([weak] {
          if (auto self = weak.lock()) self->feed(machine::cancelled{});
        });
      });
    }
    // Tracked from the start: a wait may last with nothing in flight.
    keep_alive_ = shared_from_this();
    client().track(static_cast<ShutdownHook&>(*this));
    feed(machine::started{state && state->cancelled(), wait_.has_value()});
  }

 private:
  LockHost& client() const { return latch_->client(); }

  void feed(const machine::event& happened) {
    auto self = shared_from_this();
    for (const auto& action : machine_.on(happened)) {
      std::visit([this](const auto& step) { perform(step); }, action);
    }
  }

  void perform(const machine::arm_deadline&) { client().loop().schedule(*this, clock::now() + *wait_); }

  void perform(const machine::join&) {
    leave();
    node_ = client().topology().node_for(latch_->channel().view());
    if (!node_) return feed(machine::no_node{});
    // join() may run on_ready at once, and the wait may end in it.
    waiter_ = node_->pubsub().join(latch_->channel(), *this, latch_wake_rules());
    if (machine_.finished()) leave();
  }

  void perform(const machine::pause&) {
    std::weak_ptr<LatchWaitOp> weak = shared_from_this();
    pause_timer_ = client().loop().after(client().config().retry_backoff_min, [weak] {
      if (auto self = weak.lock()) {
        self->pause_timer_ = 0;
        self->feed(machine::retry_timer_fired{});
      }
    });
  }

  void perform(const machine::read_count&) {
    std::weak_ptr<LatchWaitOp> weak = shared_from_this();
    latch_->count([weak](std::error_code error, std::int64_t count, const std::string& message) {
      auto self = weak.lock();
      if (!self) return;
      if (error) {
        self->failure_ = message;
        return self->feed(machine::read_failed{error});
      }
      self->feed(machine::count_read{count});
    });
  }

  void perform(const machine::park&) {
    // The channel's slot moved to another node since it was joined (a
    // failover or a resharding): its messages are published there now.
    if (client().topology().node_for(latch_->channel().view()) != node_) {
      return feed(machine::woken{wake_cause::reconnect});
    }
    if (waiter_ != 0 && node_->pubsub().park(latch_->channel().view(), waiter_)) feed(machine::permit_taken{});
  }

  void perform(const machine::finish& step) {
    auto keep = std::move(keep_alive_);
    client().loop().cancel(static_cast<Timer&>(*this));
    if (pause_timer_ != 0) client().loop().cancel(pause_timer_);
    if (auto& state = cancel_access::state(cancel_)) state->remove(cancel_handle_);
    leave();
    client().untrack(static_cast<ShutdownHook&>(*this));
    std::string message;
    switch (step.why) {
      case machine::reason::opened:
      case machine::reason::timed_out:
        break;
      case machine::reason::cancelled:
        message = latch_->message("the wait was cancelled");
        break;
      case machine::reason::shut_down:
        message = latch_->message("the client shut down");
        break;
      case machine::reason::failed:
        message = failure_;
        break;
    }
    auto done = std::move(done_);
    done(step.error, step.why == machine::reason::opened ? 1 : 0, message);
  }

  void leave() {
    if (waiter_ != 0) node_->pubsub().leave(latch_->channel().view(), waiter_, false);
    waiter_ = 0;
  }

  // ChannelListener: the op is its own waiter on the latch's channel.
  void on_ready() override { feed(machine::subscription_ready{}); }
  void on_wake(wake_cause why) override { feed(machine::woken{why}); }
  // Timer: the deadline.
  void on_timer() override { feed(machine::deadline_passed{}); }
  // ShutdownHook.
  void on_shutdown() override { feed(machine::shut_down{}); }

  std::shared_ptr<CountDownLatchCore> latch_;
  std::optional<std::chrono::milliseconds> wait_;
  cancel_token cancel_;
  CountDownLatchCore::done_fn done_;
  machine machine_;
  std::shared_ptr<LatchWaitOp> keep_alive_;  // while tracked: the host's list only points at it
  std::shared_ptr<ServerLinks> node_;
  std::uint64_t waiter_ = 0;
  std::uint64_t cancel_handle_ = 0;
  TimerQueue::id pause_timer_ = 0;
  std::string failure_;
};

}  // namespace

void CountDownLatchCore::wait(std::optional<milliseconds> wait, cancel_token cancel, done_fn done) {
  std::make_shared<LatchWaitOp>(shared_from_this(), wait, std::move(cancel), std::move(done))->start();
}

}  // namespace warden::detail
