#include "lock/renewal_pacing.hpp"

#include <algorithm>

namespace warden::detail {
namespace {

std::size_t calls_for(RenewalPacing::Step step, std::size_t batch_size) {
  const std::size_t by_holds = step.holds / std::max<std::size_t>(batch_size, 1);
  return std::clamp<std::size_t>(by_holds, 1, step.calls);
}

}  // namespace

std::size_t RenewalPacing::calls_in_flight(std::chrono::nanoseconds lateness, std::chrono::nanoseconds period,
                                           std::size_t batch_size) {
  if (lateness <= period / 4) return calls_for(on_time, batch_size);
  if (lateness <= period / 2) return calls_for(behind, batch_size);
  return calls_for(late, batch_size);
}

std::size_t RenewalPacing::most_calls_in_flight(std::size_t batch_size) { return calls_for(late, batch_size); }

}  // namespace warden::detail
