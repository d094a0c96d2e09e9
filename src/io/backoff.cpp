#include "io/backoff.hpp"

#include <algorithm>
#include <random>

namespace warden::detail {

Backoff::Backoff(std::chrono::milliseconds min, std::chrono::milliseconds max, std::uint64_t seed)
    : min_(std::max(min, std::chrono::milliseconds{1})), max_(std::max(max, min_)), random_(seed) {}

std::chrono::milliseconds Backoff::delay(int attempt) {
  auto ceiling = min_;
  for (int i = 0; i < attempt && ceiling < max_; ++i) {
    if (ceiling > max_ / 2) {
      ceiling = max_;
      break;
    }
    ceiling *= 2;
  }
  ceiling = std::min(ceiling, max_);
  std::uniform_int_distribution<long long> pick(ceiling.count() / 2, ceiling.count());
  return std::chrono::milliseconds{pick(random_)};
}

}  // namespace warden::detail
