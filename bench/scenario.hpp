// warden-bench: running one scenario and reducing its records to figures.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <warden/client.hpp>

#include "cpu_time.hpp"
#include "lock_kinds.hpp"
#include "stats.hpp"

namespace warden_bench {

// Which redis-benchmark figure a scenario's throughput is compared with; none
// for a paced scenario, whose rate is set by its clock, not by the server.
enum class bound_kind { single_connection, eight_connections, none };

struct scenario_spec {
  std::string name;         // "S1", also the prefix of its lock labels ("S1:0")
  std::string description;  // one line for the table
  unsigned threads = 1;
  unsigned locks = 1;  // worker i takes lock (i + k) % locks on its k-th pair
  bound_kind bound = bound_kind::single_connection;
  lock_factory make_lock;
  // Zero: pairs back to back. Otherwise each worker starts a pair on every
  // tick of this period (see pacer.hpp) and sleeps in between.
  std::chrono::nanoseconds pace{0};
  // The full names of the locks, one per lock, when the run places them (on a
  // cluster: on chosen masters). Empty: "<key prefix><name>:<index>".
  std::vector<std::string> lock_names{};
  // Zero: each "lock" admits one holder. N: it is a semaphore of N permits
  // (make_lock's acquire and release), so up to N may be inside at once, and
  // the checks and hand-offs are counted in permits (see analyze()).
  unsigned permits = 0;
};

struct run_settings {
  double duration_s = 5;
  std::string key_prefix;        // makes this run's lock names unique on a shared server
  std::FILE* records = nullptr;  // when set, one CSV line per acquisition is appended
  double hang_grace_s = 60;      // how long workers may take to stop after the window closes
  // Cumulative CPU seconds of the server (INFO cpu), sampled at both ends of
  // the window; returns a negative value when it cannot tell. Optional.
  std::function<double()> server_cpu_s;
  // Calls per command so far (INFO commandstats: "evalsha" -> n), sampled at
  // both ends of the window; empty when it cannot tell. Optional.
  std::function<std::map<std::string, std::uint64_t>()> server_commands;
  std::function<void()> on_hang;  // called (and must not return) when they take longer
};

struct scenario_result {
  scenario_spec spec;
  double window_s = 0;                // from the start signal to the stop signal
  std::uint64_t acquisitions = 0;     // every lock() that returned, window or not
  std::uint64_t pairs_in_window = 0;  // lock+unlock pairs whose unlock() returned before the stop signal
  double pairs_per_s = 0;             // pairs_in_window / window_s

  distribution pair_latency;         // t_rel_done - t_acq_start
  distribution acquisition_wait;     // t_enter - t_acq_start
  distribution handoff_gap;          // t_enter(next) - t_exit(previous), owner changes only
  distribution handoff_gap_waiting;  // the same, only where next was already in lock() at t_exit(previous)

  std::uint64_t successions = 0;    // acquisitions that had a previous acquisition of the same lock
  std::uint64_t owner_changes = 0;  // ... whose owner differed from that previous one

  std::uint64_t per_thread_min = 0;  // acquisitions of the least and most successful worker
  std::uint64_t per_thread_max = 0;

  std::uint64_t skipped_ticks = 0;  // paced only: ticks a pair ran past, so no pair started on them

  std::uint64_t flag_violations = 0;     // the in-process "occupied" flag was found in the wrong state
  std::uint64_t timestamp_overlaps = 0;  // an acquisition began before the previous holder's t_exit

  // CPU seconds spent during the window by this process (workers and warden's
  // I/O thread) and by redis-server; negative when unknown. Divided by the
  // window they tell which side is saturated.
  double client_cpu_s = -1;
  double server_cpu_s = -1;
  context_switches client_switches;  // this process's, during the window

  // Commands redis-server ran during the window, by name (commandstats
  // deltas; INFO itself left out, it is the bench's own sampling). Commands a
  // script runs count too, under their own names. Empty when unknown.
  std::map<std::string, std::uint64_t> server_commands;
  bool commands_known = false;
  // CPU nanoseconds per pair completed in the window (`cpu_s`: client_cpu_s
  // or server_cpu_s); negative when unknown.
  double per_pair_ns(double cpu_s) const {
    return cpu_s >= 0 && pairs_in_window > 0 ? cpu_s * 1e9 / static_cast<double>(pairs_in_window) : -1;
  }

  // Per pair completed in the window; negative when unknown.
  double commands_per_pair(std::initializer_list<const char*> names) const {
    if (!commands_known || pairs_in_window == 0) return -1;
    std::uint64_t n = 0;
    for (const char* name : names) {
      auto it = server_commands.find(name);
      if (it != server_commands.end()) n += it->second;
    }
    return static_cast<double>(n) / static_cast<double>(pairs_in_window);
  }
  double all_commands_per_pair() const {
    if (!commands_known || pairs_in_window == 0) return -1;
    std::uint64_t n = 0;
    for (auto& [name, calls] : server_commands) n += calls;
    return static_cast<double>(n) / static_cast<double>(pairs_in_window);
  }

  std::uint64_t lock_errors = 0;    // lock() threw
  std::uint64_t unlock_errors = 0;  // unlock() threw
  std::string first_error;

  double owner_change_share() const {
    return successions == 0 ? 0.0 : static_cast<double>(owner_changes) / static_cast<double>(successions);
  }
  std::uint64_t violations() const { return flag_violations + timestamp_overlaps; }
};

// Runs `spec` for settings.duration_s with all workers on the one `client`,
// then reduces the records. Blocks until every worker has stopped; if that
// takes more than hang_grace_s, reports the stuck workers on stderr and calls
// settings.on_hang.
scenario_result run_scenario(warden::Client& client, const scenario_spec& spec, const run_settings& settings);

// The header line of the --records CSV.
void write_records_header(std::FILE* out);

}  // namespace warden_bench
