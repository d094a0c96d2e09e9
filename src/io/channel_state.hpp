// The subscription state of one pub/sub channel. Pure logic: the subscriber
// feeds it events and performs the action it returns.
#pragma once

namespace warden::detail {

class ChannelState {
 public:
  enum class action { none, subscribe, unsubscribe };

  // A user starts or stops needing the channel. `link_up` says whether the
  // subscriber connection can send now.
  action want(bool link_up);
  action unwant();

  // The server confirmed a SUBSCRIBE / UNSUBSCRIBE we sent. A change of mind
  // while the command was in flight is acted on here, never by sending a
  // second command over the first: (un)subscribe replies for one channel
  // cannot be told apart, so at most one is ever outstanding.
  action subscribed();
  action unsubscribed();
  // The server refused a SUBSCRIBE (an ACL without the channel): the channel
  // is not subscribed; its users poll instead (see PubSub).
  void refused();

  // The server ended a confirmed subscription on its own (a shard channel
  // whose slot moved): subscribe again if anyone still needs it.
  action dropped(bool link_up);

  // The subscriber connection dropped (the server forgot every subscription)
  // or came back.
  void link_down();
  action link_up();

  bool active() const { return state_ == state::subscribed; }
  // Nobody needs the channel and nothing is in flight: the entry may go.
  bool idle() const { return users_ == 0 && state_ == state::unsubscribed; }
  int users() const { return users_; }

 private:
  enum class state { unsubscribed, subscribing, subscribed, unsubscribing };
  state state_ = state::unsubscribed;
  int users_ = 0;
};

}  // namespace warden::detail
