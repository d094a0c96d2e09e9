// Runs a program and captures what it prints, for tests of command-line
// tools. No shell: arguments are passed as they are.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace warden::test {

struct ProgramRun {
  int exit_code = -1;  // 128 + signal when a signal ended it
  std::string out;     // standard output
  std::string err;     // standard error
};

// How the program's standard input is given.
enum class input_kind {
  none,      // /dev/null
  terminal,  // a pseudo-terminal (isatty() is true) on which `input` is typed
};

// Runs `program` with `args` and waits for it, up to `timeout` (then it is
// killed and exit_code is 128 + SIGKILL). Throws std::runtime_error when it
// cannot be started.
ProgramRun run_program(const std::string& program, const std::vector<std::string>& args,
                       std::chrono::milliseconds timeout, input_kind input_from = input_kind::none,
                       const std::string& input = {});

}  // namespace warden::test
