#include "io/link_state.hpp"

#include <warden/error.hpp>

namespace warden::detail {
namespace {

// Errors that reconnecting will not cure: wrong credentials, a certificate
// not trusted, a peer that is not Redis.
bool permanent(std::error_code why) {
  return why == errc::authentication_failed || why == errc::tls_verify_failed || why == errc::tls_handshake_failed ||
         why == errc::protocol_error;
}

}  // namespace

LinkState::actions LinkState::on(const event& e) {
  return std::visit([this](const auto& what) { return handle(what); }, e);
}

LinkState::actions LinkState::handle(const connect_due&) {
  if (state_ != state::idle && state_ != state::backing_off) return {};
  state_ = state::connecting;
  return {open{}};
}

LinkState::actions LinkState::handle(const set_up&) {
  if (state_ != state::connecting) return {};
  state_ = state::ready;
  failures_ = 0;
  unanswered_closes_ = 0;
  last_error_.clear();
  ever_connected_ = true;
  return {};
}

LinkState::actions LinkState::handle(const link_failed& e) {
  if (state_ == state::closed) return {};
  unanswered_closes_ = e.closed_unanswered ? unanswered_closes_ + 1 : 0;
  // A link that was ready a moment ago reconnects at once; after that the
  // delays grow with each consecutive failure.
  bool was_ready = state_ == state::ready;
  state_ = state::backing_off;
  last_error_ = e.why;
  actions answer{retry_after{was_ready ? std::chrono::milliseconds{0} : backoff_.delay(failures_++)}};
  if (permanent(e.why) || refuses_plaintext()) answer.push_back(fail_queued{});
  return answer;
}

LinkState::actions LinkState::handle(const close_requested&) {
  state_ = state::closed;
  return {};
}

}  // namespace warden::detail
