// warden-bench: the scale mode (--scale H): many holds on one Client, what
// their renewal costs the other callers, the server and the heap.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <warden/config.hpp>

#include "options.hpp"
#include "scale_results.hpp"

namespace warden_bench {

struct scale_settings {
  std::size_t holds = 0;
  unsigned periods = 5;
  std::size_t in_flight = 1'000;           // lock_async / unlock_async outstanding at most
  std::optional<int> batch;                // Config::lock_watchdog_batch_size; unset: the Config's
  std::chrono::milliseconds lease{3'000};  // Config::lock_watchdog_timeout; renewal period lease / 3
  std::string key_prefix;
};

// Runs phases (a)-(d) (see print_usage) on a Client made from `client`;
// `server` is read with plain connections (INFO, PTTL). Throws
// std::runtime_error when the run cannot be set up.
scale_result run_scale(const warden::Config& client, const warden::Config& server, const scale_settings& settings,
                       std::vector<std::string>& notes);

struct waiters_settings {
  std::size_t waiters = 0;
  std::chrono::milliseconds lease{30'000};
  std::string key_prefix;
};

waiters_result run_waiters(const warden::Config& client, const warden::Config& server, const waiters_settings& settings,
                           std::vector<std::string>& notes);

// --scale and/or --waiters: opens the target, runs the modes asked for and
// prints their report on stdout. Returns the exit status (see print_usage).
int run_scale_modes(const options& opts);

}  // namespace warden_bench
