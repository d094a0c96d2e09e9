// warden-bench: the plain-hiredis loop on several threads at once, S3's
// ceiling. Each thread has a blocking connection and a lock of its own, so
// no thread waits for another, only for the server: what that many blocking
// threads of one process get out of this machine and server for warden's
// scripts, with no library between them and the server and no contention
// (S3's threads share one Client and 64 locks).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "hiredis_loop.hpp"

namespace warden_bench {

// Runs every loop back to back for `duration`, each on a thread of its own,
// started together. The result adds their pairs up over the longest window;
// the pair latency is of all their pairs together; client CPU and context
// switches are the whole process's over the run (the loop threads are all
// that works in it), loop_thread_cpu_s the loop threads' own added up;
// `server_cpu_s` as for hiredis_loop::run. ok only if every loop's was.
loop_result run_side_by_side(const std::vector<std::unique_ptr<hiredis_loop>>& loops,
                             std::chrono::duration<double> duration, const std::function<double()>& server_cpu_s);

}  // namespace warden_bench
