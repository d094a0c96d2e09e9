// Another program run by a test (e.g. the worker that takes a lock in a
// separate process, to be crashed with SIGKILL).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

namespace warden::test {

// Not thread-safe: drive one ChildProcess from one thread at a time.
class ChildProcess {
 public:
  // Starts `program` (a path, or a name looked up on PATH) with `args` via
  // fork/exec, no shell. stdin is /dev/null; stdout and stderr are the test's.
  // Throws std::runtime_error if the program cannot be executed.
  ChildProcess(const std::string& program, const std::vector<std::string>& args);
  // SIGKILL and reap if it is still running. Never throws.
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The child's pid; stays the same after it has exited.
  pid_t pid() const;
  // Waits for the child to exit and returns its exit code, or 128 + signal if
  // a signal ended it. Calling it again returns the same code.
  int wait();
  // As wait(), but gives up after `timeout`: false if still running. On true
  // the exit code is stored in *exit_code when that is non-null.
  bool wait_for(std::chrono::milliseconds timeout, int* exit_code);
  // Sends `signal` unless the child has already been reaped (its pid could
  // belong to another process by then).
  void kill(int signal = SIGKILL);

 private:
  void reap_now() noexcept;

  pid_t pid_ = -1;
  bool reaped_ = true;
  int exit_code_ = -1;
};

}  // namespace warden::test
