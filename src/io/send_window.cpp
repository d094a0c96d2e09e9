#include "io/send_window.hpp"

#include <algorithm>

namespace warden::detail {

SendWindow::actions SendWindow::on(const event& e) {
  return std::visit([this](const auto& happened) { return handle(happened); }, e);
}

SendWindow::actions SendWindow::handle(const offered& e) const {
  // Past its deadline, or due before the server could get to it: written
  // now, its outcome would be unknown when the deadline passes; unwritten,
  // it certainly had no effect.
  auto expected_now = expected(e.in_flight);
  if (e.deadline <= e.now || e.deadline - e.now < expected_now) return {fail_unsent{expected_now}};
  if (limit_ != 0 && e.in_flight >= limit_) return {hold{}};
  return {write{}};
}

SendWindow::actions SendWindow::handle(const answered& e) {
  // An answer with nothing ahead of it measured a round trip, not the pace.
  if (e.ahead == 0) return {};
  auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::max(e.now - e.begun, clock::duration{0}));
  per_command_ += (took - per_command_) / 32;
  return {};
}

SendWindow::actions SendWindow::handle(const link_reset&) {
  per_command_ = std::chrono::microseconds{0};
  return {};
}

}  // namespace warden::detail
