// warden-bench: a fixed-rate tick for the paced scenarios.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace warden_bench {

// Ticks every `period` on steady_clock (monotonic), counted from `origin`.
// wait() sleeps until the next tick. A pair that runs past one or more ticks
// does not make the loop catch up with a burst: those ticks are skipped (and
// counted), and the loop waits for the first tick still ahead, so the rate
// never exceeds one pair per period.
class pacer {
 public:
  using clock = std::chrono::steady_clock;

  pacer(clock::time_point origin, std::chrono::nanoseconds period) : next_(origin), period_(period) {}

  void wait() {
    next_ += period_;
    const auto now = clock::now();
    if (next_ <= now) {
      const auto behind = (now - next_) / period_ + 1;
      skipped_ += static_cast<std::uint64_t>(behind);
      next_ += behind * period_;
    }
    std::this_thread::sleep_until(next_);
  }

  std::uint64_t skipped() const noexcept { return skipped_; }

 private:
  clock::time_point next_;
  std::chrono::nanoseconds period_;
  std::uint64_t skipped_ = 0;
};

}  // namespace warden_bench
