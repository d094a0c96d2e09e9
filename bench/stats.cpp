#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace warden_bench {

std::int64_t percentile(std::vector<std::int64_t>& samples, double q) {
  const auto n = samples.size();
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  // nth_element is linear; a full sort per percentile would dominate the
  // analysis of a few million samples for nothing.
  auto nth = samples.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(samples.begin(), nth, samples.end());
  return *nth;
}

distribution summarize(std::vector<std::int64_t> samples) {
  distribution d;
  d.count = samples.size();
  if (samples.empty()) return d;
  d.max = *std::max_element(samples.begin(), samples.end());
  d.p50 = percentile(samples, 0.50);
  d.p99 = percentile(samples, 0.99);
  return d;
}

std::string format_ns(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  const double mag = std::abs(v);
  // Each unit is used from 1 up to 999 of it, with three significant digits.
  auto three = [](double x, const char* unit) {
    const double a = std::abs(x);
    if (a >= 100) return fmt::format("{:.0f} {}", x, unit);
    if (a >= 10) return fmt::format("{:.1f} {}", x, unit);
    return fmt::format("{:.2f} {}", x, unit);
  };
  if (mag < 1e3) return fmt::format("{} ns", ns);
  if (mag < 1e6) return three(v / 1e3, "µs");
  if (mag < 1e9) return three(v / 1e6, "ms");
  return three(v / 1e9, "s");
}

std::string group_thousands(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  const std::size_t lead = digits.size() % 3;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (i + 3 - lead) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string format_rate(double per_second) {
  if (!(per_second >= 0)) return "n/a";
  return group_thousands(static_cast<std::uint64_t>(std::llround(per_second)));
}

}  // namespace warden_bench
