// warden-bench: S1 and S3 through coroutines (<warden/asio.hpp> on one
// io_context run by one thread), beside the blocking figures of the same run.
// The interface is C++17; coro_scenario.cpp (C++20, Asio) implements it when
// standalone Asio is found, coro_scenario_none.cpp otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <warden/client.hpp>

namespace warden_bench {

struct coro_result {
  std::string name;         // "S1co"
  std::string description;  // one line
  double window_s = 0;
  std::uint64_t pairs_in_window = 0;  // lock+unlock pairs whose unlock completed in the window
  double pairs_per_s = 0;
  double client_cpu_s = -1;  // this process (the io_context's thread and warden's I/O thread) over the window
  std::uint64_t errors = 0;
  std::uint64_t overlaps = 0;  // a lock found occupied by another coroutine on entry
  std::string first_error;
};

// Whether warden-bench was built with the coroutine scenarios (Asio found).
bool coro_scenarios_built();

// `coroutines` coroutines on one io_context (run by the calling thread), each
// taking lock (i + k) % locks on its k-th pair, back to back, for duration_s.
coro_result run_coro_scenario(warden::Client& client, const std::string& name, const std::string& description,
                              unsigned coroutines, const std::vector<std::string>& lock_names, double duration_s);

}  // namespace warden_bench
