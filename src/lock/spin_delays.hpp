// The sleeps between a SpinLock waiter's attempts: the SpinBackoff's
// sequence, drawn with jitter. Pure logic (seeded), drawn from by AcquireMachine.
// The lock layer keeps its own copy of the back-off's values (PollBackoff):
// it does not include the public SpinLock handle's header.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "io/jitter_random.hpp"

namespace warden::detail {

// A poller's back-off: warden::SpinBackoff's values (see its documentation).
struct PollBackoff {
  std::chrono::milliseconds initial_delay{1};
  std::chrono::milliseconds max_delay{128};
  int multiplier = 2;
  std::chrono::milliseconds jitter{2};

  PollBackoff() = default;
  PollBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, int factor,
              std::chrono::milliseconds spread)
      : initial_delay(initial), max_delay(max), multiplier(factor), jitter(spread) {}
  // From warden::SpinBackoff (any struct with these four fields), so that
  // the handles pass theirs as it is without this layer naming their header.
  template <class Backoff, class = decltype(std::declval<const Backoff&>().initial_delay),
            class = std::enable_if_t<!std::is_same_v<Backoff, PollBackoff>>>
  PollBackoff(const Backoff& backoff)  // NOLINT: converts on purpose
      : initial_delay(backoff.initial_delay),
        max_delay(backoff.max_delay),
        multiplier(backoff.multiplier),
        jitter(backoff.jitter) {}
};

// Why `backoff` is out of its documented ranges (naming the field), or nullopt.
std::optional<std::string> spin_backoff_problem(const PollBackoff& backoff);

class SpinDelays {
 public:
  // `backoff` must be valid (spin_backoff_problem() is nullopt).
  SpinDelays(const PollBackoff& backoff, std::uint64_t seed);

  // The sleep after the next failed attempt: min(initial × multiplier^n,
  // max) for the n-th call (from 0), plus a uniform extra in [0, jitter].
  std::chrono::milliseconds next();

 private:
  PollBackoff backoff_;
  std::chrono::milliseconds base_;
  jitter_random random_;
};

}  // namespace warden::detail
