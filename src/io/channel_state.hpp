// The subscription state of one pub/sub channel. A pure machine (see
// docs/pure-machines.md): the subscriber feeds it events with on() and
// performs the actions it answers.
#pragma once

#include <variant>

#include "io/action_list.hpp"

namespace warden::detail {

class ChannelState {
 public:
  // ---- events ----
  // A user starts or stops needing the channel. `link_up`: the subscriber
  // connection can send now.
  struct wanted {
    bool link_up = false;
  };
  struct unwanted {};
  // The server confirmed a SUBSCRIBE / UNSUBSCRIBE we sent. A change of mind
  // while the command was in flight is acted on here, never by sending a
  // second command over the first: (un)subscribe replies for one channel
  // cannot be told apart, so at most one is ever outstanding.
  struct subscribe_confirmed {};
  struct unsubscribe_confirmed {};
  // The server refused a SUBSCRIBE (an ACL without the channel): the channel
  // is not subscribed; its users poll instead (see PubSub).
  struct refused {};
  // The server ended a confirmed subscription on its own (a shard channel
  // whose slot moved): subscribe again if anyone still needs it.
  struct dropped {
    bool link_up = false;
  };
  // The subscriber connection dropped (the server forgot every subscription)
  // or came back.
  struct link_lost {};
  struct link_restored {};
  using event = std::variant<wanted, unwanted, subscribe_confirmed, unsubscribe_confirmed, refused, dropped, link_lost,
                             link_restored>;

  // ---- actions ----
  struct subscribe {};    // send (S)SUBSCRIBE for the channel
  struct unsubscribe {};  // send (S)UNSUBSCRIBE for the channel
  using action = std::variant<subscribe, unsubscribe>;
  using actions = action_list<action, 1>;

  actions on(const event& e);

  bool active() const { return state_ == state::subscribed; }
  // Nobody needs the channel and nothing is in flight: the entry may go.
  bool idle() const { return users_ == 0 && state_ == state::unsubscribed; }
  int users() const { return users_; }

 private:
  enum class state { unsubscribed, subscribing, subscribed, unsubscribing };

  actions handle(const wanted& e);
  actions handle(const unwanted& e);
  actions handle(const subscribe_confirmed& e);
  actions handle(const unsubscribe_confirmed& e);
  actions handle(const refused& e);
  actions handle(const dropped& e);
  actions handle(const link_lost& e);
  actions handle(const link_restored& e);

  state state_ = state::unsubscribed;
  int users_ = 0;
};

}  // namespace warden::detail
