// warden-bench: the markdown report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "hiredis_loop.hpp"
#include "redis_bound.hpp"
#include "scenario.hpp"
#include "stats.hpp"

namespace warden_bench {

struct report_input {
  std::string server;      // where the run went, e.g. "127.0.0.1:40123 (throw-away redis-server 7.0.15, pid 812)"
  bool cluster = false;    // server describes a Redis Cluster
  std::string loop_where;  // "host:port" the plain-hiredis loop ran on
  double duration_s = 0;
  unsigned cpus = 0;
  std::string load_at_start;  // /proc/loadavg before the bound and after the last scenario; "" if unknown
  std::string load_at_end;
  bound_result bound_single;  // redis-benchmark -c 1
  bound_result bound_eight;   // redis-benchmark -c 8
  distribution loopback_rtt;  // blocking PING on the loop's connection; count 0: not measured
  loop_result loop;           // the plain-hiredis loop, pairs back to back
  loop_result loop_paced;     // the same, one pair per tick; ran == false unless P1 was selected
  // The same on as many threads as S3 has, at once, a connection and a lock
  // each (hiredis_threads.hpp): S3's ceiling. ran == false unless S3 was
  // selected on a single server.
  loop_result loop_threads;
  unsigned loop_threads_count = 0;
  double pace_ms = 0;  // the tick of P1 and of loop_paced
  std::vector<scenario_result> results;
  std::vector<std::string> notes;  // printed last, one bullet each
};

// The targets; the report marks each ✓ PASS or ✗ MISS.
// Against the redis-benchmark bound:
inline constexpr double s1_min_share_of_bound = 0.9;  // S1 pairs/s ≥ 0.9 × (1-connection ops/s ÷ 2)
inline constexpr double s3_min_pairs_per_s = 30'000;  // S3 ≥ 30,000 pairs/s
// Against the plain-hiredis loop (L: back to back, Lp: paced):
inline constexpr double s1_min_share_of_loop = 0.85;  // S1 pairs/s ≥ 0.85 × L pairs/s
inline constexpr double s1_max_cpu_vs_loop = 1.5;     // S1 client CPU/pair ≤ 1.5 × L's
inline constexpr double p1_max_cpu_vs_loop = 2.0;     // P1 client CPU/pair ≤ 2 × Lp's
inline constexpr double s3_min_share_of_loop = 1.5;   // S3 pairs/s ≥ 1.5 × L pairs/s
inline constexpr double s3_max_cpu_vs_loop = 1.0;     // S3 client CPU/pair ≤ L's
// Contention:
inline constexpr double s2_min_owner_changes = 0.95;   // S2 owner changes ≥ 95 % of successions
inline constexpr double s2_max_handoff_p50_ms = 1.0;   // S2 hand-off gap p50 ≤ 1 ms
inline constexpr double s2_max_handoff_p99_ms = 10.0;  // S2 hand-off gap p99 ≤ 10 ms

void print_report(std::FILE* out, const report_input& in);

}  // namespace warden_bench
