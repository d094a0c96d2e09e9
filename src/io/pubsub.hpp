// One subscriber connection per node, shared by every local waiter: one
// subscription per channel however many wait on it. Whom a message wakes is
// decided by the waiters' WakeRules (the lock layer's policy); the
// subscriber keeps the waiters and delivers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/channel_state.hpp"
#include "io/connection.hpp"
#include "io/shared_text.hpp"
#include "io/small_list.hpp"
#include "io/wake_rules.hpp"

namespace warden::detail {

// Someone waiting on a channel: told once its subscription is confirmed (or
// will not come: it should re-try rather than wait), and when woken. An
// acquire is one itself, so joining costs no callback objects of its own.
class ChannelListener {
 public:
  virtual ~ChannelListener() = default;
  virtual void on_ready() = 0;
  virtual void on_wake(wake_cause why) = 0;
};

class PubSub : private Flushable {
 public:
  // `sharded`: subscribe with SSUBSCRIBE (shard channels, Redis 7) instead
  // of SUBSCRIBE; messages published with SPUBLISH then reach the waiters.
  PubSub(EventLoop& loop, ConnectionOptions options, bool sharded = false);
  PubSub(const PubSub&) = delete;
  PubSub& operator=(const PubSub&) = delete;
  ~PubSub() { loop_.cancel_flush(this); }

  void start() { connection_.start(); }
  void close() {
    loop_.cancel(poll_timer_);
    poll_timer_ = 0;
    loop_.cancel_flush(this);
    letting_go_.clear();
    connection_.close();
  }
  // The node no longer serves these channels: every waiter is woken to
  // re-poll (and re-join where its lock now lives), then as close().
  void retire();

  // Adds a waiter on `channel`. `on_ready` runs once the subscription is
  // confirmed (at once if it already is). `on_wake` runs when this waiter is
  // woken while parked (wake_cause::message, or wake_cause::timer when
  // subscriptions are refused and waiters poll), after a reconnect and after
  // the server dropped the subscription on its own (wake_cause::reconnect:
  // messages sent meanwhile are lost, so every waiter re-polls).
  // The listener is held by address: it must stay alive until it leaves, and
  // keep itself alive through its own calls (one may make it leave). The
  // channel's entry shares `channel`'s characters instead of copying them.
  // `rules` decide what the channel's messages wake (the lock layer's
  // policy); they must outlive the subscriber.
  std::uint64_t join(const SharedText& channel, ChannelListener& listener, const WakeRules& rules);
  // The same with two callbacks (on_ready may be empty), kept by the
  // subscriber until the waiter leaves.
  std::uint64_t join(std::string_view channel, std::function<void()> on_ready, std::function<void(wake_cause)> on_wake,
                     const WakeRules& rules);

  // The waiter goes to sleep until woken. Returns true instead when a wake-up
  // arrived while nobody was parked: the caller should try again at once.
  bool park(std::string_view channel, std::uint64_t waiter);
  // The waiter woke by itself (its timer) and is trying again.
  void unpark(std::string_view channel, std::uint64_t waiter);
  // The waiter stops waiting. `pass_wake`: it was woken and leaves without the
  // lock, so the wake-up goes to the next waiter (or is kept as a permit).
  void leave(std::string_view channel, std::uint64_t waiter, bool pass_wake);

  bool subscribed(std::string_view channel) const;
  // No channel subscribed or waited on, and the connection idle: no message
  // can come.
  bool idle() const { return channels_.empty() && owned_.empty() && connection_.idle(); }

  // Told when a (S)SUBSCRIBE is answered with MOVED or ASK (a shard channel
  // whose slot moved): the cluster's router learns from it.
  void on_redirect(std::function<void(const Reply&)> handler) { on_redirect_ = std::move(handler); }

  // True once the server refused a SUBSCRIBE on this connection (an ACL user
  // without channel permissions). Waiters on channels that are not
  // subscribed are then woken every poll_interval() to re-try: their wait is
  // bounded by that rather than by the lock's TTL, and no reconnect is made
  // for it (reconnecting would be refused the same way).
  bool polling() const { return polling_; }
  std::chrono::milliseconds poll_interval() const { return poll_interval_; }

 private:
  struct Waiter {
    std::uint64_t id;  // by join order, which is id order (ids only grow)
    ChannelListener* listener;
    bool ready;
    bool parked;
  };
  struct Channel {
    SharedText name;                   // its characters key the map
    const WakeRules* rules = nullptr;  // what its messages wake (its waiters' rules)
    ChannelState state;
    std::uint32_t permits = 0;
    // Searched by bisection. Most channels have one waiter, kept in place.
    SmallList<Waiter> waiters;

    Waiter* find(std::uint64_t id);
    bool erase(std::uint64_t id);
    std::uint32_t size() const { return static_cast<std::uint32_t>(waiters.size()); }
  };
  using Channels = std::unordered_map<std::string_view, Channel>;

  Channel& entry_for(const SharedText& channel);
  void on_push(const Push& push);
  void dropped(std::string_view channel);
  void on_link_ready();
  void on_link_down();
  // Every waiter re-polls: the parked ones are woken (wake_cause::reconnect),
  // those whose subscription was unconfirmed are told they are ready.
  void wake_everyone();
  void perform(std::string_view channel, const ChannelState::actions& actions);
  // Sends the UNSUBSCRIBE of the channels let go in this loop turn.
  void flush_output() override;
  void confirmed(std::string_view channel);
  void message(std::string_view channel, const std::string& payload);
  void wake_next(std::string_view channel);
  // Performs what the channel's rules answered about its waiters.
  void perform_wake(std::string_view channel, Channel& entry, const WakeRules::actions& todo);
  // `channel` must outlive the call (the entry may go during the wake-up).
  void wake_one(std::string_view channel, std::uint64_t waiter, wake_cause why);
  // Wakes `waiter` of `entry`, both just looked up.
  static void wake(Waiter& waiter, wake_cause why);
  // Removes the entry if nobody needs it (a view of its own name goes with it).
  void forget_if_idle(std::string_view channel);
  void refused(const std::string& why);
  void redirected(const Reply& refusal);
  // Every channel still waiting for its confirmation counts as refused, and
  // its waiters are told they are ready (they re-try rather than wait).
  void refuse_unconfirmed();
  // Marks waiter `id` of `name` ready (its subscription is in place or will
  // not come) and runs its on_ready; a no-op if it is gone or already ready.
  void tell_ready(std::string_view name, std::uint64_t id);
  void poll_tick();

  EventLoop& loop_;
  warden::logger log_;
  std::chrono::milliseconds poll_interval_;
  Connection connection_;
  bool sharded_;
  Channels channels_;
  // Channels let go in this loop turn, unsubscribed together at its end:
  // a crowd of waiters served at once leaves in a few commands, not one
  // each. A lost link drops them (the server forgot every subscription).
  std::vector<std::string> letting_go_;
  // The listeners of the two-callback join, by waiter id.
  std::unordered_map<std::uint64_t, std::unique_ptr<ChannelListener>> owned_;
  std::uint64_t next_waiter_ = 1;
  bool polling_ = false;
  TimerQueue::id poll_timer_ = 0;
  std::function<void(const Reply&)> on_redirect_;
};

}  // namespace warden::detail
