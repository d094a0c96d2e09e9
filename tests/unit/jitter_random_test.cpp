// jitter_random: a small seeded generator whose draws spread back-off jitter.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "io/jitter_random.hpp"

namespace {

using warden::detail::jitter_random;

std::vector<std::uint64_t> draws(std::uint64_t seed, int n) {
  jitter_random random(seed);
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(random());
  return out;
}

TEST(JitterRandom, IsSmall) {
  // The point of it: a parked waiter keeps one (or two) of these.
  EXPECT_LE(sizeof(jitter_random), 8u);
}

TEST(JitterRandom, SameSeedSameSequence) { EXPECT_EQ(draws(42, 100), draws(42, 100)); }

TEST(JitterRandom, NeighbouringSeedsDiffer) {
  // Waiters seeded one after another must not retry together.
  auto a = draws(1, 50);
  auto b = draws(2, 50);
  int equal = 0;
  for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
  EXPECT_EQ(equal, 0);
}

TEST(JitterRandom, NoRepeatsInAShortRun) {
  auto d = draws(7, 10'000);
  EXPECT_EQ(std::set<std::uint64_t>(d.begin(), d.end()).size(), d.size());
}

TEST(JitterRandom, ZeroSeedStillVaries) {
  auto d = draws(0, 3);
  EXPECT_NE(d[0], 0u);
  EXPECT_NE(d[0], d[1]);
  EXPECT_NE(d[1], d[2]);
}

TEST(JitterRandom, UniformDistributionCoversItsRangeEvenly) {
  jitter_random random(12345);
  std::uniform_int_distribution<int> pick(0, 9);
  std::vector<int> counts(10, 0);
  constexpr int n = 100'000;
  for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(pick(random))];
  for (int c : counts) {
    // Each bucket expects 10,000; 5 standard deviations is about ±475.
    EXPECT_GT(c, 9'400);
    EXPECT_LT(c, 10'600);
  }
}

TEST(JitterRandom, HighAndLowBitsBothVary) {
  jitter_random random(99);
  std::uint64_t ored = 0;
  std::uint64_t anded = ~std::uint64_t{0};
  for (int i = 0; i < 1'000; ++i) {
    auto v = random();
    ored |= v;
    anded &= v;
  }
  EXPECT_EQ(ored, ~std::uint64_t{0});
  EXPECT_EQ(anded, 0u);
}

}  // namespace
