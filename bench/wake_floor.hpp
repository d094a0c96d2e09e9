// warden-bench --waiters: the server's floor for waking N waiters at once.
//
// Each waiter's wake costs the server a release (warden's lock_release.lua,
// which publishes to the waiter's channel) and the waiter's acquire
// (lock_acquire.lua). Sent pipelined on one plain hiredis connection, with a
// second one subscribed to the N channels so every release publishes to a
// listener, the 2N scripts take the time no client can beat on this server:
// the last waiter cannot hold its lock before its release and its acquire
// have both run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <warden/config.hpp>

namespace warden_bench {

struct wake_floor {
  std::size_t locks = 0;
  double seconds = 0;                             // first byte written → last reply read, the 2N scripts
  double server_cpu_s = 0;                        // redis-server CPU over it (INFO cpu)
  std::map<std::string, std::uint64_t> commands;  // the server's calls by command over it (INFO commandstats)
  std::int64_t expired_keys = 0;                  // keys the server expired over it (INFO stats)
  std::string error;                              // set: not measured, and why
};

// The floor measured several times in one run: it is as noisy as the
// machine (other work steals the server's core), so one reading is no
// fair yardstick. The median is the one a wake is compared with; the
// fastest is shown as well.
struct wake_floors {
  std::vector<wake_floor> runs;  // in the order measured
  // Of the runs measured without error; 0 when there is none.
  double median_s() const;
  double min_s() const;
  std::size_t measured() const;
};

// Removes the unlock latches of every lock whose name begins with `prefix`
// (what warden's releases and the floor's leave behind, expiring after
// command_timeout × (retry_attempts + 2)), so that the server's expiring of
// them does not fall into a later measured window: readings taken 15 s
// apart would otherwise differ by that work. Returns how many went.
std::size_t drop_unlock_latches(const warden::Config& config, const std::string& prefix);

// `n` locks named after `prefix` and `run` (each run its own names: a
// release's latch would otherwise answer a later run's release), taken, released and taken again by another
// owner, then released; nothing is left but the releases' latch keys, which
// expire as warden's do.
wake_floor measure_wake_floor(const warden::Config& config, const std::string& prefix, std::size_t n,
                              const char* publish_command, int run = 0);

}  // namespace warden_bench
