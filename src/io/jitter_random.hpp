// A small seeded random bit generator for back-off jitter. std::mt19937_64
// carries 2.5 KB of state, and every acquire that may back off keeps one
// (a parked waiter lives for as long as the lock is held elsewhere): ten
// thousand waiters paid tens of megabytes for numbers that only have to
// spread retries apart. This one keeps 8 bytes (the SplitMix64 sequence:
// a Weyl step followed by a 64-bit finaliser), which is plenty for jitter
// and is not meant for anything that needs to be unpredictable.
// It models UniformRandomBitGenerator, so the <random> distributions take it.
#pragma once

#include <cstdint>
#include <limits>

namespace warden::detail {

class jitter_random {
 public:
  using result_type = std::uint64_t;

  explicit jitter_random(std::uint64_t seed) : state_(seed) {}

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    // The Weyl increment is odd, so the state visits every 64-bit value
    // once per period; the mix spreads neighbouring states far apart.
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

}  // namespace warden::detail
