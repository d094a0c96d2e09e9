// warden-bench: percentiles and the way figures are printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace warden_bench {

// Summary of a set of durations in nanoseconds. count == 0 means "no samples"
// (e.g. no owner changes in a one-thread scenario); the other fields are then 0.
struct distribution {
  std::size_t count = 0;
  std::int64_t p50 = 0;
  std::int64_t p99 = 0;
  std::int64_t max = 0;
};

// Nearest-rank percentiles: the reported value is always one that was
// measured, never an interpolation between two samples. Takes the samples by
// value because it reorders them.
distribution summarize(std::vector<std::int64_t> samples);

// The sample at rank ceil(q * n) (1-based) of `samples`, reordering them;
// q in (0, 1]. `samples` must not be empty.
std::int64_t percentile(std::vector<std::int64_t>& samples, double q);

// "48.2 µs", "1.35 ms", "2.10 s": three significant digits, the unit chosen so
// the number stays readable.
std::string format_ns(std::int64_t ns);

// "1,234,567": thousands separated without depending on the process locale.
std::string group_thousands(std::uint64_t n);

// "12,345" for rates; fractions of an operation per second mean nothing here.
std::string format_rate(double per_second);

}  // namespace warden_bench
