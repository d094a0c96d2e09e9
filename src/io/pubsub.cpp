#include "io/pubsub.hpp"

#include <algorithm>
#include <vector>

#include "io/spare_buckets.hpp"

namespace warden::detail {

PubSub::PubSub(EventLoop& loop, ConnectionOptions options, bool sharded)
    : loop_(loop),
      log_(options.log),
      poll_interval_(std::max(options.backoff_max, std::chrono::milliseconds{10})),
      connection_(loop, std::move(options)),
      sharded_(sharded) {
  connection_.on_push([this](const Push& push) { on_push(push); });
  connection_.on_ready([this] { on_link_ready(); });
  connection_.on_down([this] { on_link_down(); });
}

PubSub::Waiter* PubSub::Channel::find(std::uint64_t id) {
  auto it = std::lower_bound(waiters.begin(), waiters.end(), id,
                             [](const Waiter& waiter, std::uint64_t wanted) { return waiter.id < wanted; });
  return it != waiters.end() && it->id == id ? it : nullptr;
}

bool PubSub::Channel::erase(std::uint64_t id) {
  Waiter* waiter = find(id);
  if (!waiter) return false;
  // A crowd that has gone gives its storage back (SmallList does).
  waiters.erase(waiter);
  return true;
}

namespace {

// A waiter given as two callbacks.
class CallbackListener final : public ChannelListener {
 public:
  CallbackListener(std::function<void()> ready, std::function<void(wake_cause)> wake)
      : ready_(std::move(ready)), wake_(std::move(wake)) {}
  void on_ready() override {
    // Told once; what it captured goes with it.
    auto ready = std::move(ready_);
    if (ready) ready();
  }
  void on_wake(wake_cause why) override {
    // A copy: the callback may make the waiter leave, which destroys this.
    auto wake = wake_;
    if (wake) wake(why);
  }

 private:
  std::function<void()> ready_;
  std::function<void(wake_cause)> wake_;
};

}  // namespace

std::uint64_t PubSub::join(std::string_view channel, std::function<void()> on_ready,
                           std::function<void(wake_cause)> on_wake, const WakeRules& rules) {
  auto listener = std::make_unique<CallbackListener>(std::move(on_ready), std::move(on_wake));
  ChannelListener& held = *listener;
  // Kept under the id the join below hands out (on_ready may already run in it).
  owned_.emplace(next_waiter_, std::move(listener));
  return join(SharedText(channel), held, rules);
}

PubSub::Channel& PubSub::entry_for(const SharedText& channel) {
  if (auto it = channels_.find(channel.view()); it != channels_.end()) return it->second;
  Channel entry;
  entry.name = channel;
  // The key views the entry's own handle: the characters never move.
  std::string_view key = entry.name.view();
  return channels_.emplace(key, std::move(entry)).first->second;
}

std::uint64_t PubSub::join(const SharedText& channel, ChannelListener& listener, const WakeRules& rules) {
  Channel& entry = entry_for(channel);
  entry.rules = &rules;
  std::uint64_t id = next_waiter_++;
  Waiter& waiter = entry.waiters.push_back(Waiter{id, &listener, false, false});
  if (entry.state.active()) {
    waiter.ready = true;
    entry.state.on(ChannelState::wanted{connection_.ready()});
    // Last: on_ready may make waiters join or leave this channel.
    listener.on_ready();
  } else if (polling_) {
    // Subscriptions are refused here: the waiter polls (poll_tick) instead of
    // waiting for a confirmation that will not come, and no SUBSCRIBE is sent
    // (each refusal would cost a reconnect).
    waiter.ready = true;
    entry.state.on(ChannelState::wanted{false});
    if (poll_timer_ == 0) poll_timer_ = loop_.after(poll_interval_, [this] { poll_tick(); });
    listener.on_ready();
  } else {
    perform(channel.view(), entry.state.on(ChannelState::wanted{connection_.ready()}));
  }
  return id;
}

bool PubSub::park(std::string_view channel, std::uint64_t id) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return false;
  Channel& entry = it->second;
  Waiter* waiter = entry.find(id);
  if (!waiter) return false;
  bool retry = false;
  for (const auto& action : entry.rules->on(WakeRules::parking{entry.permits})) {
    if (auto* permits = std::get_if<WakeRules::set_permits>(&action)) entry.permits = permits->permits;
    if (std::holds_alternative<WakeRules::retry_now>(action)) retry = true;
  }
  if (!retry) waiter->parked = true;
  return retry;
}

void PubSub::unpark(std::string_view channel, std::uint64_t id) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  if (Waiter* waiter = it->second.find(id)) waiter->parked = false;
}

void PubSub::leave(std::string_view channel, std::uint64_t id, bool pass_wake) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  if (!it->second.erase(id)) return;
  // A two-callback waiter's listener goes with it (it may be the caller:
  // it reads nothing of itself after its callback returns).
  if (!owned_.empty()) owned_.erase(id);
  Channel& entry = it->second;
  perform_wake(channel, entry, entry.rules->on(WakeRules::left{entry.size(), entry.permits}));
  perform(channel, entry.state.on(ChannelState::unwanted{}));
  if (pass_wake) wake_next(channel);
  forget_if_idle(channel);
}

bool PubSub::subscribed(std::string_view channel) const {
  auto it = channels_.find(channel);
  return it != channels_.end() && it->second.state.active();
}

void PubSub::perform(std::string_view channel, const ChannelState::actions& actions) {
  for (const auto& action : actions) {
    if (std::holds_alternative<ChannelState::subscribe>(action)) {
      connection_.send_subscription({sharded_ ? "SSUBSCRIBE" : "SUBSCRIBE", std::string(channel)});
    } else if (sharded_) {
      // One at a time: the shard channels of one SUNSUBSCRIBE must share a
      // cluster slot.
      connection_.send_subscription({"SUNSUBSCRIBE", std::string(channel)});
    } else {
      if (letting_go_.empty()) loop_.schedule_flush(this);
      letting_go_.emplace_back(channel);
    }
  }
}

void PubSub::flush_output() {
  // The server confirms each channel of an UNSUBSCRIBE apart, in order, and
  // the link counts them against the command (LinkProtocol); a channel is in
  // one command at most, as ChannelState has one command in flight for it.
  constexpr std::size_t most_per_command = 512;
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < letting_go_.size();) {
    argv.assign(1, "UNSUBSCRIBE");
    for (; i < letting_go_.size() && argv.size() <= most_per_command; ++i) argv.push_back(std::move(letting_go_[i]));
    connection_.send_subscription(argv);
  }
  letting_go_.clear();
  if (letting_go_.capacity() > most_per_command) std::vector<std::string>().swap(letting_go_);
}

void PubSub::forget_if_idle(std::string_view channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || !it->second.state.idle() || !it->second.waiters.empty()) return;
  channels_.erase(it);
  // A crowd of waiters gone must not leave a bucket per channel behind:
  // rehashed down once under an eighth is used (as the lock books do).
  // References to the other channels stay valid.
  release_spare_buckets(channels_);
}

void PubSub::on_push(const Push& push) {
  switch (push.kind) {
    case push_kind::refused:
      return refused(push.error);
    case push_kind::message:
    case push_kind::smessage:
      return message(push.channel, push.payload);
    case push_kind::subscribe:
    case push_kind::ssubscribe: {
      auto it = channels_.find(push.channel);
      if (it == channels_.end()) return;
      perform(push.channel, it->second.state.on(ChannelState::subscribe_confirmed{}));
      if (it->second.state.active()) confirmed(push.channel);
      return;
    }
    case push_kind::unsubscribe:
    case push_kind::sunsubscribe: {
      if (!push.solicited) return dropped(push.channel);
      auto it = channels_.find(push.channel);
      if (it == channels_.end()) return;
      perform(push.channel, it->second.state.on(ChannelState::unsubscribe_confirmed{}));
      forget_if_idle(push.channel);
      return;
    }
  }
}

void PubSub::dropped(std::string_view channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  if (log_) {
    try {
      log_(log_level::info, "warden: " + connection_.describe() + ": the server ended the subscription to " +
                                std::string(channel) + "; subscribing again");
    } catch (...) {
    }
  }
  perform(channel, it->second.state.on(ChannelState::dropped{connection_.ready()}));
  // Whatever was published while the channel was not subscribed is lost:
  // every waiter re-polls.
  std::vector<std::uint64_t> wake;
  for (auto& waiter : it->second.waiters) {
    if (waiter.ready) wake.push_back(waiter.id);
  }
  for (auto id : wake) wake_one(channel, id, wake_cause::reconnect);
  forget_if_idle(channel);
}

void PubSub::confirmed(std::string_view channel) {
  // Callbacks may join or leave: collect first, then call, re-checking each.
  std::vector<std::uint64_t> ids;
  if (auto it = channels_.find(channel); it != channels_.end()) {
    for (auto& waiter : it->second.waiters) ids.push_back(waiter.id);
  }
  for (auto id : ids) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    Waiter* waiter = it->second.find(id);
    if (!waiter) continue;
    if (!waiter->ready) {
      waiter->ready = true;
      waiter->listener->on_ready();
    } else {
      // Re-subscribed after a reconnect: anything published meanwhile was lost.
      wake_one(channel, id, wake_cause::reconnect);
    }
  }
}

void PubSub::message(std::string_view channel, const std::string& payload) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  Channel& entry = it->second;
  std::uint32_t parked = 0;
  for (auto& waiter : entry.waiters) parked += waiter.parked ? 1 : 0;
  perform_wake(channel, entry, entry.rules->on(WakeRules::message{payload, entry.size(), entry.permits, parked}));
}

void PubSub::wake_next(std::string_view channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  Channel& entry = it->second;
  perform_wake(channel, entry, entry.rules->on(WakeRules::passed_on{entry.size(), entry.permits}));
}

void PubSub::perform_wake(std::string_view channel, Channel& entry, const WakeRules::actions& todo) {
  for (const auto& action : todo) {
    if (auto* permits = std::get_if<WakeRules::set_permits>(&action)) {
      entry.permits = permits->permits;
    } else if (std::holds_alternative<WakeRules::wake_oldest>(action)) {
      // Found here: nothing runs between this lookup and its wake-up, which
      // may make the entry go (so it is the last thing done with it).
      for (auto& waiter : entry.waiters) {
        if (waiter.parked) return wake(waiter, wake_cause::message);
      }
      // Its answer is about nobody asleep: it wakes no one.
      return perform_wake(channel, entry, entry.rules->on(WakeRules::nobody_parked{entry.size(), entry.permits}));
    } else if (std::holds_alternative<WakeRules::owe_unparked>(action)) {
      std::uint32_t awake = 0;
      for (auto& waiter : entry.waiters) awake += waiter.parked ? 0 : 1;
      entry.permits = awake;
    } else if (std::holds_alternative<WakeRules::wake_parked>(action)) {
      std::vector<std::uint64_t> wake;
      for (auto& waiter : entry.waiters) {
        if (waiter.parked) wake.push_back(waiter.id);
      }
      // Each looked up afresh: an earlier wake-up may make waiters (and the entry) go.
      for (auto id : wake) wake_one(channel, id, wake_cause::message);
      return;
    } else if (auto* some = std::get_if<WakeRules::wake_some>(&action)) {
      std::vector<std::uint64_t> wake;
      for (auto& waiter : entry.waiters) {
        if (wake.size() >= some->count) break;
        if (waiter.parked) wake.push_back(waiter.id);
      }
      // Each looked up afresh: an earlier wake-up may make waiters (and the entry) go.
      for (auto id : wake) wake_one(channel, id, wake_cause::message);
      return;
    }
  }
}

void PubSub::wake_one(std::string_view channel, std::uint64_t id, wake_cause why) {
  // Looked up afresh each time: an earlier wake-up may have made waiters leave.
  auto entry = channels_.find(channel);
  if (entry == channels_.end()) return;
  if (Waiter* waiter = entry->second.find(id)) wake(*waiter, why);
}

void PubSub::wake(Waiter& waiter, wake_cause why) {
  waiter.parked = false;
  // Read first: the listener may make this waiter (or others) leave, which
  // moves or frees `waiter`; the listener keeps itself alive.
  ChannelListener* told = waiter.listener;
  told->on_wake(why);
}

void PubSub::refused(const std::string& why) {
  auto refusal = Reply::make_error(why);
  auto kind = classify(refusal);
  if (kind == reply_class::moved || kind == reply_class::ask) return redirected(refusal);
  // The error does not say which SUBSCRIBE it answers: every channel still
  // waiting for its confirmation counts as refused.
  if (!polling_ && log_) {
    try {
      log_(log_level::warning, "warden: " + connection_.describe() + ": the server refused SUBSCRIBE (" + why +
                                   "); waiters re-try every " + std::to_string(poll_interval_.count()) +
                                   " ms instead of being woken");
    } catch (...) {
      // A logger that throws must not stop the fallback.
    }
  }
  polling_ = true;
  if (poll_timer_ == 0) poll_timer_ = loop_.after(poll_interval_, [this] { poll_tick(); });
  refuse_unconfirmed();
}

void PubSub::redirected(const Reply& refusal) {
  // A shard channel whose slot is served elsewhere now. Not a refusal to
  // fall back to polling for: the waiters re-poll, which finds where the
  // lock lives, and join the subscriber there.
  if (on_redirect_) on_redirect_(refusal);
  refuse_unconfirmed();
}

void PubSub::refuse_unconfirmed() {
  // Handles to the names, not views: a callback may make an entry go.
  std::vector<std::pair<SharedText, std::uint64_t>> ready;
  for (auto& [name, entry] : channels_) {
    if (entry.state.active()) continue;
    entry.state.on(ChannelState::refused{});
    for (auto& waiter : entry.waiters) {
      if (!waiter.ready) ready.emplace_back(entry.name, waiter.id);
    }
  }
  for (auto& [name, id] : ready) tell_ready(name.view(), id);
}

void PubSub::tell_ready(std::string_view name, std::uint64_t id) {
  // Looked up again: an earlier waiter's on_ready may have removed this one.
  auto entry = channels_.find(name);
  if (entry == channels_.end()) return;
  Waiter* waiter = entry->second.find(id);
  if (!waiter || waiter->ready) return;
  waiter->ready = true;
  waiter->listener->on_ready();
}

void PubSub::poll_tick() {
  poll_timer_ = 0;
  std::vector<std::pair<SharedText, std::uint64_t>> wake;
  bool anyone = false;
  for (auto& [name, entry] : channels_) {
    if (entry.state.active()) continue;
    for (auto& waiter : entry.waiters) {
      anyone = true;
      if (waiter.parked) wake.emplace_back(entry.name, waiter.id);
    }
  }
  if (anyone) poll_timer_ = loop_.after(poll_interval_, [this] { poll_tick(); });
  for (auto& [name, id] : wake) wake_one(name.view(), id, wake_cause::timer);
}

void PubSub::on_link_ready() {
  if (polling_) return;  // subscriptions are refused: nothing to re-subscribe
  std::vector<SharedText> names;
  for (auto& [name, entry] : channels_) names.push_back(entry.name);
  for (auto& name : names) {
    auto it = channels_.find(name.view());
    if (it != channels_.end()) perform(name.view(), it->second.state.on(ChannelState::link_restored{}));
  }
}

void PubSub::retire() {
  close();
  wake_everyone();
}

void PubSub::on_link_down() {
  // Every waiter re-polls now: if the server is gone its acquire fails with a
  // connection error by its deadline instead of sleeping out the lock's TTL;
  // after a blip it simply finds the lock free or waits again. That includes
  // a waiter whose SUBSCRIBE was not confirmed yet (the link dropped between
  // the server taking it and us reading the answer): it is told it is ready,
  // which makes it re-try, rather than waiting for a confirmation that will
  // only come after a reconnect.
  wake_everyone();
}

void PubSub::wake_everyone() {
  letting_go_.clear();  // forgotten by the server with the link, or not ours to send any more
  std::vector<std::pair<SharedText, std::uint64_t>> wake, unconfirmed;
  std::vector<SharedText> unused;
  for (auto& [name, entry] : channels_) {
    entry.state.on(ChannelState::link_lost{});
    if (entry.waiters.empty()) unused.push_back(entry.name);
    for (auto& waiter : entry.waiters) {
      (waiter.ready ? wake : unconfirmed).emplace_back(entry.name, waiter.id);
    }
  }
  // A channel let go whose UNSUBSCRIBE was unanswered when the link dropped
  // has nobody and nothing in flight now: its entry goes, or the subscriber
  // would never be idle again (and the loop thread never park).
  for (const auto& name : unused) forget_if_idle(name.view());
  for (auto& [name, id] : wake) wake_one(name.view(), id, wake_cause::reconnect);
  for (auto& [name, id] : unconfirmed) tell_ready(name.view(), id);
}

}  // namespace warden::detail
