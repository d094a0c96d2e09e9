#include "lock/settle_pacer.hpp"

namespace warden::detail {

SettlePacer::actions SettlePacer::on(const event& e) {
  return std::visit([this](const auto& happened) { return handle(happened); }, e);
}

SettlePacer::actions SettlePacer::handle(const wanted&) {
  // First come, first sent: one that arrives while others wait goes behind them.
  if (in_flight_ < limit_ && waiting_ == 0) {
    ++in_flight_;
    return {send_oldest{}};
  }
  ++waiting_;
  return {};
}

SettlePacer::actions SettlePacer::handle(const answered&) {
  if (in_flight_ > 0) --in_flight_;
  if (waiting_ == 0 || in_flight_ >= limit_) return {};
  --waiting_;
  ++in_flight_;
  return {send_oldest{}};
}

}  // namespace warden::detail
