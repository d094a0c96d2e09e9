#include "lock/spin_delays.hpp"

#include <fmt/format.h>

#include <random>

namespace warden::detail {
namespace {

// Sleeps beyond an hour are not back-off any more, and keep the products
// below far from overflowing.
constexpr std::chrono::milliseconds longest_delay = std::chrono::hours(1);
constexpr int largest_multiplier = 1000;

}  // namespace

std::optional<std::string> spin_backoff_problem(const PollBackoff& backoff) {
  auto out_of = [](const char* field, std::chrono::milliseconds value, std::chrono::milliseconds low) {
    return fmt::format("SpinBackoff::{} must be {} ms to {} ms, got {} ms", field, low.count(), longest_delay.count(),
                       value.count());
  };
  using std::chrono::milliseconds;
  if (backoff.initial_delay < milliseconds{1} || backoff.initial_delay > longest_delay) {
    return out_of("initial_delay", backoff.initial_delay, milliseconds{1});
  }
  if (backoff.max_delay < backoff.initial_delay || backoff.max_delay > longest_delay) {
    return out_of("max_delay", backoff.max_delay, backoff.initial_delay) + " (at least initial_delay)";
  }
  if (backoff.multiplier < 1 || backoff.multiplier > largest_multiplier) {
    return fmt::format("SpinBackoff::multiplier must be 1 to {}, got {}", largest_multiplier, backoff.multiplier);
  }
  if (backoff.jitter < milliseconds{0} || backoff.jitter > longest_delay) {
    return out_of("jitter", backoff.jitter, milliseconds{0});
  }
  return std::nullopt;
}

SpinDelays::SpinDelays(const PollBackoff& backoff, std::uint64_t seed)
    : backoff_(backoff), base_(backoff.initial_delay), random_(seed) {}

std::chrono::milliseconds SpinDelays::next() {
  auto delay = base_;
  // Grow for the next call; both factors are bounded (see above), so the
  // product fits before it is capped.
  base_ = std::min(base_ * backoff_.multiplier, backoff_.max_delay);
  if (backoff_.jitter.count() > 0) {
    delay += std::chrono::milliseconds{
        std::uniform_int_distribution<std::chrono::milliseconds::rep>(0, backoff_.jitter.count())(random_)};
  }
  return delay;
}

}  // namespace warden::detail
