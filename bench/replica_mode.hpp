// warden-bench --replica (issue 28): what replica acknowledgement costs. One
// throw-away server with one replica; the plain-hiredis loop without and with
// a WAIT after each EVALSHA, and S1 on a Client with replica_sync off and on,
// all in the same run, and the cost of WAIT per pair for each side.
#pragma once

#include "options.hpp"

namespace warden_bench {

// Runs the replica mode and prints its markdown report on stdout. Returns the
// process's exit code: 0, or 1 when a run failed or a lock was held twice.
// Throws std::runtime_error when the servers cannot be started.
int run_replica_mode(const options& opts);

}  // namespace warden_bench
