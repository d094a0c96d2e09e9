// The sleeps between a SpinLock waiter's attempts: the SpinBackoff's
// sequence, drawn with jitter. Pure logic (seeded), drawn from by AcquireMachine.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <warden/spin_lock.hpp>

#include "io/jitter_random.hpp"

namespace warden::detail {

// Why `backoff` is out of its documented ranges (naming the field), or nullopt.
std::optional<std::string> spin_backoff_problem(const SpinBackoff& backoff);

class SpinDelays {
 public:
  // `backoff` must be valid (spin_backoff_problem() is nullopt).
  SpinDelays(const SpinBackoff& backoff, std::uint64_t seed);

  // The sleep after the next failed attempt: min(initial × multiplier^n,
  // max) for the n-th call (from 0), plus a uniform extra in [0, jitter].
  std::chrono::milliseconds next();

 private:
  SpinBackoff backoff_;
  std::chrono::milliseconds base_;
  jitter_random random_;
};

}  // namespace warden::detail
