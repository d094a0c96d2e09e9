#include "io/link_state.hpp"

namespace warden::detail {

bool LinkState::begin_connect() {
  if (state_ != state::idle && state_ != state::backing_off) return false;
  state_ = state::connecting;
  return true;
}

void LinkState::connected() {
  if (state_ != state::connecting) return;
  state_ = state::ready;
  failures_ = 0;
  unanswered_closes_ = 0;
  last_error_.clear();
  ever_connected_ = true;
}

std::chrono::milliseconds LinkState::failed(std::error_code why, bool closed_unanswered) {
  if (state_ == state::closed) return std::chrono::milliseconds{0};
  unanswered_closes_ = closed_unanswered ? unanswered_closes_ + 1 : 0;
  // A link that was ready a moment ago reconnects at once; after that the
  // delays grow with each consecutive failure.
  bool was_ready = state_ == state::ready;
  state_ = state::backing_off;
  last_error_ = why;
  if (was_ready) return std::chrono::milliseconds{0};
  return backoff_.delay(failures_++);
}

}  // namespace warden::detail
