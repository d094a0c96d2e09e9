// warden-bench: the bound — what the server does with redis-benchmark running
// a script as heavy as warden's acquire, with no lock logic on the client.
#pragma once

#include <cstdint>
#include <string>

#include <warden/config.hpp>

namespace warden_bench {

// One redis-benchmark measurement.
struct bound_result {
  bool ok = false;
  unsigned connections = 0;
  std::uint64_t requests = 0;  // -n of the measuring run
  double ops_per_s = 0;        // EVALSHA calls per second
  double p50_ms = 0;           // per-call latency as redis-benchmark reports it
  double p99_ms = 0;
  std::string error;  // why ok is false
  std::string where;  // the server(s) it ran on, for the report

  // A lock+unlock pair costs two script calls, so this is the most pairs per
  // second the same server and connection count could possibly reach.
  double pairs_per_s() const { return ops_per_s / 2; }
};

// The script the bound runs: the core of an acquire (HINCRBY of the owner's
// hold count and PEXPIRE of the lease) and nothing else.
extern const char* const bound_script;

// Loads bound_script into the server's script cache and returns its SHA1.
// Throws std::runtime_error.
std::string load_bound_script(const warden::Config& server);

// Runs redis-benchmark (found on PATH) with `connections` connections doing
// EVALSHA <sha> 1 <key> field 30000. A short calibrating run first sizes -n so
// the measuring run takes about `seconds`. Never throws: failures come back
// with ok == false and the tool's output in `error`.
//
// `cluster`: `server` is one node of a cluster and redis-benchmark runs in
// its cluster mode, spreading the connections over the masters; `key` must
// then contain "{tag}", which it replaces with a hash tag each connection's
// master serves. The script must be loaded on every master.
bound_result measure_bound(const warden::Config& server, const std::string& sha, const std::string& key,
                           unsigned connections, double seconds, bool cluster = false);

}  // namespace warden_bench
