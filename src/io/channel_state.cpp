#include "io/channel_state.hpp"

namespace warden::detail {

ChannelState::actions ChannelState::on(const event& e) {
  return std::visit([this](const auto& what) { return handle(what); }, e);
}

ChannelState::actions ChannelState::handle(const wanted& e) {
  ++users_;
  if (state_ == state::unsubscribed && e.link_up) {
    state_ = state::subscribing;
    return {subscribe{}};
  }
  return {};
}

ChannelState::actions ChannelState::handle(const unwanted&) {
  if (users_ > 0) --users_;
  if (users_ == 0 && state_ == state::subscribed) {
    state_ = state::unsubscribing;
    return {unsubscribe{}};
  }
  return {};
}

ChannelState::actions ChannelState::handle(const subscribe_confirmed&) {
  if (state_ != state::subscribing) return {};
  if (users_ == 0) {
    state_ = state::unsubscribing;
    return {unsubscribe{}};
  }
  state_ = state::subscribed;
  return {};
}

ChannelState::actions ChannelState::handle(const unsubscribe_confirmed&) {
  if (state_ != state::unsubscribing) return {};
  if (users_ > 0) {
    state_ = state::subscribing;
    return {subscribe{}};
  }
  state_ = state::unsubscribed;
  return {};
}

ChannelState::actions ChannelState::handle(const refused&) {
  if (state_ == state::subscribing) state_ = state::unsubscribed;
  return {};
}

ChannelState::actions ChannelState::handle(const dropped& e) {
  if (state_ != state::subscribed) return {};  // a command in flight settles it
  state_ = state::unsubscribed;
  return e.link_up ? handle(link_restored{}) : actions{};
}

ChannelState::actions ChannelState::handle(const link_lost&) {
  state_ = state::unsubscribed;
  return {};
}

ChannelState::actions ChannelState::handle(const link_restored&) {
  if (state_ == state::unsubscribed && users_ > 0) {
    state_ = state::subscribing;
    return {subscribe{}};
  }
  return {};
}

}  // namespace warden::detail
