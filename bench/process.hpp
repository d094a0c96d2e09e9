// warden-bench: finding and running the Redis tools the bench drives.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden_bench {

// Full path of the executable `name` in the first PATH directory that has it,
// the way a shell would find it; std::nullopt when none does.
std::optional<std::string> find_on_path(std::string_view name);

// What a child process printed and how it ended.
struct captured_output {
  int exit_status = -1;  // the child's exit code; -1 when it did not exit normally
  std::string output;    // stdout and stderr, interleaved as written
};

// Runs argv[0] (a path) with the given arguments through popen, waits for it
// and returns everything it printed. Arguments are single-quoted for the
// shell, so values such as passwords pass through unchanged.
captured_output run_capture(const std::vector<std::string>& argv);

}  // namespace warden_bench
