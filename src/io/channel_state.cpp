#include "io/channel_state.hpp"

namespace warden::detail {

ChannelState::action ChannelState::want(bool link_up) {
  ++users_;
  if (state_ == state::unsubscribed && link_up) {
    state_ = state::subscribing;
    return action::subscribe;
  }
  return action::none;
}

ChannelState::action ChannelState::unwant() {
  if (users_ > 0) --users_;
  if (users_ == 0 && state_ == state::subscribed) {
    state_ = state::unsubscribing;
    return action::unsubscribe;
  }
  return action::none;
}

ChannelState::action ChannelState::subscribed() {
  if (state_ != state::subscribing) return action::none;
  if (users_ == 0) {
    state_ = state::unsubscribing;
    return action::unsubscribe;
  }
  state_ = state::subscribed;
  return action::none;
}

ChannelState::action ChannelState::unsubscribed() {
  if (state_ != state::unsubscribing) return action::none;
  if (users_ > 0) {
    state_ = state::subscribing;
    return action::subscribe;
  }
  state_ = state::unsubscribed;
  return action::none;
}

void ChannelState::refused() {
  if (state_ == state::subscribing) state_ = state::unsubscribed;
}

ChannelState::action ChannelState::dropped(bool link_up) {
  if (state_ != state::subscribed) return action::none;  // a command in flight settles it
  state_ = state::unsubscribed;
  return link_up ? this->link_up() : action::none;
}

void ChannelState::link_down() { state_ = state::unsubscribed; }

ChannelState::action ChannelState::link_up() {
  if (state_ == state::unsubscribed && users_ > 0) {
    state_ = state::subscribing;
    return action::subscribe;
  }
  return action::none;
}

}  // namespace warden::detail
