// warden-bench --burst N: one Client, N lock_async calls issued at once on
// free locks (issue 29, item 1). What an overload costs: how many succeed,
// how many fail and when, how many acquire scripts reach the server, the
// client's CPU, and the server's scripts in the minute after (settling of
// lost attempts would show there).
#pragma once

#include <cstddef>

#include "options.hpp"

namespace warden_bench {

// Runs the burst mode on the target `opts` names and prints its report.
// Returns the process's exit status.
int run_burst_mode(const options& opts);

}  // namespace warden_bench
