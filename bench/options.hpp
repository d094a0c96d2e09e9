// warden-bench: command line.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace warden_bench {

struct options {
  std::optional<std::string> url;                              // --url; unset: start a throw-away redis-server
  bool cluster = false;                                        // --cluster: start a throw-away cluster instead
  double duration_s = 5;                                       // --duration, per scenario
  std::vector<std::string> scenarios{"S1", "S2", "S3", "P1"};  // --scenarios, in the order given
  std::optional<std::string> records_path;                     // --records
  bool fair = false;                                           // --fair
  bool spin = false;                                           // --spin
  bool help = false;                                           // --help
  // --replica: the replica mode (issue 28) instead of the scenarios: a
  // throw-away server with one replica, and the cost of WAIT per pair.
  bool replica = false;
  // The scale modes (issue 14); either or both replace the scenarios above.
  std::optional<std::size_t> scale;    // --scale H: hold H locks
  std::optional<std::size_t> waiters;  // --waiters N: N parked waiters
  unsigned periods = 5;                // --periods N: renewal periods held (--scale)
  std::size_t in_flight = 1'000;       // --in-flight N: async calls outstanding at most (--scale)
  std::optional<int> batch;            // --batch N: Config::lock_watchdog_batch_size (--scale)
  std::optional<long long> lease_ms;   // --lease MS: Config::lock_watchdog_timeout
  // --burst N: N lock_async calls at once (issue 29); replaces the scenarios.
  std::optional<std::size_t> burst;
  int burst_watch_s = 60;  // --burst-watch SECONDS: the server watched after the burst
  // --peer DIR: also run S1/S2/S3 with redis-semaphore's Mutex (Node), whose
  // packages npm installed in DIR (bench/peer_run.hpp).
  std::optional<std::string> peer_dir;
};

// A command line that cannot be understood; what() says why.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Accepts "--name value" and "--name=value". Throws usage_error.
options parse_options(int argc, char** argv);

void print_usage(std::FILE* out);

}  // namespace warden_bench
