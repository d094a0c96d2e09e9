// Exponential back-off with jitter, for retries and reconnects.
#pragma once

#include <chrono>
#include <cstdint>
#include "io/jitter_random.hpp"

namespace warden::detail {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds min, std::chrono::milliseconds max, std::uint64_t seed);

  // The delay before attempt number `attempt` (0-based): min·2^attempt capped
  // at max, drawn uniformly from [delay/2, delay] so that clients that failed
  // together do not retry together.
  std::chrono::milliseconds delay(int attempt);

 private:
  std::chrono::milliseconds min_;
  std::chrono::milliseconds max_;
  jitter_random random_;
};

}  // namespace warden::detail
