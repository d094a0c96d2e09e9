#include "io/send_window.hpp"

#include <algorithm>

namespace warden::detail {

namespace {

using std::chrono::microseconds;

microseconds follow(microseconds estimate, microseconds sample) {
  if (sample > estimate) return estimate + (sample - estimate) / 2;
  return estimate - (estimate - sample) / 8;
}

}  // namespace

SendWindow::actions SendWindow::on(const event& e) {
  return std::visit([this](const auto& happened) { return handle(happened); }, e);
}

SendWindow::actions SendWindow::handle(const offered& e) const {
  // Past its deadline, or due before an answer could come: written now, its
  // outcome would be unknown when the deadline passes; unwritten, it
  // certainly had no effect.
  auto expected_now = expected(e.in_flight);
  if (e.deadline <= e.now || e.deadline - e.now < expected_now) return {fail_unsent{expected_now}};
  if (limit_ != 0 && e.in_flight >= limit_) return {hold{}};
  return {write{}};
}

SendWindow::actions SendWindow::handle(const answered& e) {
  auto took = std::chrono::duration_cast<microseconds>(std::max(e.now - e.written, clock::duration{0}));
  if (e.ahead == 0) {
    round_trip_ = follow(round_trip_, took);
  } else {
    // What it took beyond a round trip was the server's work on those ahead.
    auto beyond = std::max(took - round_trip_, microseconds{0});
    per_command_ = follow(per_command_, beyond / static_cast<long long>(e.ahead));
  }
  return {};
}

SendWindow::actions SendWindow::handle(const link_reset&) {
  round_trip_ = per_command_ = microseconds{0};
  return {};
}

}  // namespace warden::detail
