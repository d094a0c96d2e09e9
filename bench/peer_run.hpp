// warden-bench's peer run (--peer DIR): the same lock scenarios taken with
// another library, redis-semaphore's Mutex (Node, over ioredis), on the same
// server in the same run, so that warden's figures have a yardstick outside
// the project. The Node side is bench/peer/redis_semaphore_peer.js; the bench
// starts it as a child process and reads the server's counters around each
// of its scenarios, as it does around warden's.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <warden/config.hpp>

#include "hiredis_loop.hpp"
#include "scenario.hpp"

namespace warden_bench {

// One scenario of the peer's, measured like warden's.
struct peer_result {
  std::string name;  // "S1", "S2", "S3": the same shape as warden's scenario of that name
  unsigned workers = 1;
  unsigned locks = 1;
  double window_s = 0;
  std::uint64_t pairs_in_window = 0;  // pairs whose release returned before the window closed
  std::uint64_t pairs_all = 0;        // every pair, the ones finishing after the window too
  double pairs_per_s = 0;
  double client_cpu_s = -1;  // the Node process's user + system CPU over the scenario
  double server_cpu_s = -1;  // redis-server's, between the bench's readings around the scenario
  std::map<std::string, std::uint64_t> server_commands;
  bool commands_known = false;
  double p50_us = -1;
  double p99_us = -1;
  std::uint64_t overlaps = 0;  // an acquire found the lock's in-process occupied flag set
  std::uint64_t errors = 0;
  std::string first_error;

  // Per pair done between the readings (the ones after the window too: the
  // server's counters include their work).
  double server_cpu_per_pair_us() const;
  double client_cpu_per_pair_us() const;
  double commands_per_pair() const;  // every command the server ran, scripts' own included
};

struct peer_outcome {
  bool ran = false;
  std::string skipped;   // why the peer did not run (no node, no package, a cluster); empty when it ran
  std::string versions;  // "node=v20 redis-semaphore=5.8.0 ioredis=5.4.1"
  std::vector<peer_result> results;
};

// One scenario the peer is asked to run.
struct peer_scenario {
  std::string name;
  unsigned workers = 1;
  unsigned locks = 1;
};

struct peer_settings {
  std::string package_dir;  // --peer DIR: where npm installed redis-semaphore and ioredis
  warden::Config server;    // the one server it runs against
  double duration_s = 5;
  std::string key_prefix;  // unique to this run
  std::function<double()> server_cpu_s;
  std::function<std::map<std::string, std::uint64_t>()> server_commands;
};

// Starts Node on bench/peer/redis_semaphore_peer.js, runs `scenarios` one
// after the other and stops it. Never throws: what went wrong is in
// `skipped` (nothing ran) or in a result's errors.
peer_outcome run_peer(const peer_settings& settings, const std::vector<peer_scenario>& scenarios);

// The peer's section of the report: its figures beside warden's of the same
// scenarios (from `warden`, the run's results) and the targets of issue 29
// (S3 pairs/s ≥ the peer's; server CPU per S3 pair ≤ 1.1 × the peer's).
// `ceiling` (may be null): the plain-hiredis loop on S3's threads side by
// side (hiredis_threads.hpp), set beside the peer's S3 too.
void print_peer_report(std::FILE* out, const peer_outcome& peer, const std::vector<scenario_result>& warden,
                       const loop_result* ceiling);

// The issue-29 targets against the peer.
inline constexpr double s3_min_share_of_peer = 1.0;       // warden S3 pairs/s ≥ the peer's
inline constexpr double s3_max_server_cpu_vs_peer = 1.1;  // warden S3 server CPU/pair ≤ 1.1 × the peer's

}  // namespace warden_bench
