// warden-bench: the markdown report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "redis_bound.hpp"
#include "scenario.hpp"

namespace warden_bench {

struct report_input {
  std::string server;  // where the run went, e.g. "127.0.0.1:40123 (throw-away redis-server 7.0.15, pid 812)"
  double duration_s = 0;
  unsigned cpus = 0;
  std::string load_at_start;  // /proc/loadavg before the bound and after the last scenario; "" if unknown
  std::string load_at_end;
  bound_result bound_single;  // redis-benchmark -c 1
  bound_result bound_eight;   // redis-benchmark -c 8
  std::vector<scenario_result> results;
  std::vector<std::string> notes;  // printed last, one bullet each
};

// The targets of the issue; the report marks each PASS or MISS.
inline constexpr double s1_min_share_of_bound = 0.9;   // S1 pairs/s ≥ 0.9 × (1-connection ops/s ÷ 2)
inline constexpr double s2_max_handoff_p50_ms = 1.0;   // S2 hand-off gap p50 ≤ 1 ms
inline constexpr double s2_max_handoff_p99_ms = 10.0;  // S2 hand-off gap p99 ≤ 10 ms
inline constexpr double s3_min_pairs_per_s = 30'000;   // S3 ≥ 30,000 pairs/s

void print_report(std::FILE* out, const report_input& in);

}  // namespace warden_bench
