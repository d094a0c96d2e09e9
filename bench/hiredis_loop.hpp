// warden-bench: the plain-hiredis loop. warden's own acquire and release
// scripts (lock_acquire.lua, lock_release.lua), with the keys and arguments
// warden sends for a plain Lock, sent by one thread over one blocking hiredis
// connection with nothing around them: no event loop, no watchdog, no
// pub/sub. It is what a hand-written client gets out of the same server for
// the same work, and the yardstick warden's S1, S3 and P1 are judged against.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <warden/config.hpp>

#include "cpu_time.hpp"
#include "redis_sync.hpp"
#include "stats.hpp"

namespace warden_bench {

// One run of the loop.
struct loop_result {
  bool ran = false;  // false: the loop was not run (see error)
  bool ok = false;   // false: it stopped at a bad reply or an I/O error (see error)
  std::string error;
  bool paced = false;
  double window_s = 0;
  std::uint64_t pairs = 0;  // acquire + release pairs completed, both replies as expected
  double pairs_per_s = 0;
  distribution pair_latency;        // acquire sent → release answered
  std::uint64_t skipped_ticks = 0;  // paced only: ticks a pair ran past

  // CPU seconds during the window; negative when unknown. client: the whole
  // process, the way the scenarios count it (warden's Client does not exist
  // yet while the loop runs, so the loop thread is the only one working);
  // loop_thread: that thread alone, which says the same unless something else
  // in the process ran.
  double client_cpu_s = -1;
  double loop_thread_cpu_s = -1;
  double server_cpu_s = -1;
  context_switches client_switches;  // the process's, during the window

  // CPU nanoseconds per pair, or a negative value when unknown.
  double per_pair_ns(double cpu_s) const {
    return cpu_s >= 0 && pairs > 0 ? cpu_s * 1e9 / static_cast<double>(pairs) : -1;
  }
};

class hiredis_loop {
 public:
  // Connects (AUTH and SELECT as warden would), loads both scripts with
  // SCRIPT LOAD, checks the server names them by the SHA1 warden sends in
  // EVALSHA, and runs a few untimed pairs so the first timed one finds a warm
  // connection and script cache. `lock_name` is the lock the loop takes (a
  // name no scenario uses); `publish_command` is the release script's last
  // argument, the command it wakes waiters with: what warden sends to this
  // server ("publish", or "spublish" on a cluster with shard channels).
  // `config` names one server (its cluster seeds are not used). Throws
  // std::runtime_error.
  hiredis_loop(const warden::Config& config, std::string lock_name, std::string publish_command = "publish");

  // The argument vectors point into the object's own strings.
  hiredis_loop(const hiredis_loop&) = delete;
  hiredis_loop& operator=(const hiredis_loop&) = delete;

  // From now on every EVALSHA is followed by WAIT `replicas` `timeout` on the
  // same connection, as warden follows each lock write when replica
  // acknowledgement is on (Config::replica_sync; SyncedWrites), and a pair
  // counts only when each WAIT answered at least `replicas`. Zero replicas:
  // no WAIT again.
  void wait_after_writes(int replicas, std::chrono::milliseconds timeout);

  // Round trips of PING on this connection, one at a time, after a short
  // untimed warm-up: the machine's loopback round trip as hiredis sees it.
  distribution ping_round_trip(unsigned samples);

  // Pairs back to back for `duration` when `pace` is zero; otherwise one pair
  // on each tick of `pace` (see pacer.hpp). `server_cpu_s` (optional) returns
  // redis-server's cumulative CPU seconds. Never throws: a failure ends the
  // run with ok == false and the figures of the pairs done before it.
  // `samples` (optional) receives every pair's latency as well, for a caller
  // that summarizes several loops' together.
  loop_result run(std::chrono::duration<double> duration, std::chrono::nanoseconds pace,
                  const std::function<double()>& server_cpu_s, std::vector<std::int64_t>* samples = nullptr);

 private:
  // One acquire + release. Returns "" when both replies were the expected
  // ones, else what went wrong.
  std::string pair();

  // The WAIT after a write, when wait_after_writes() asked for one. Returns
  // "" when it answered with enough replicas, else what went wrong.
  std::string wait_for_replicas(const char* after);

  // Writes 32 fresh random hex digits over the last 32 characters of `key`,
  // as warden draws a new attempt id and release request id for every call.
  void fresh_id(std::string& key);

  redis_sync connection_;
  std::mt19937_64 random_;

  // The argument vectors of the two EVALSHAs, built once; the per-call ids
  // are rewritten in place.
  std::vector<std::string> acquire_args_;
  std::vector<std::string> release_args_;
  std::vector<const char*> acquire_argv_, release_argv_;
  std::vector<std::size_t> acquire_lens_, release_lens_;
  int wait_replicas_ = 0;  // 0: no WAIT
  std::vector<std::string> wait_args_;
  std::vector<const char*> wait_argv_;
  std::vector<std::size_t> wait_lens_;
};

}  // namespace warden_bench
