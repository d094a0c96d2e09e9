// Process plumbing shared by RedisServer and ChildProcess: spawning without a
// shell, turning wait statuses into exit codes, and keeping SIGPIPE away from
// test processes without changing the process-wide disposition.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

namespace warden::test::detail {

// Resolves `program` the way execvp would (a name containing '/' is used as
// is, otherwise each PATH entry is tried). Done in the parent so the forked
// child only has to call async-signal-safe functions. Returns `fallback` (or
// `program` when `fallback` is empty) if nothing on PATH matches.
std::string resolve_program(const std::string& program, const std::string& fallback = {});

// Starts `path` with `argv` (argv[0] included) via fork/exec. The child gets
// /dev/null as stdin, `output_fd` as stdout and stderr (-1 keeps the parent's),
// no other inherited descriptors, default signal handling and an empty signal
// mask. When called from the main thread the child is also killed if the test
// process dies, so a crashed test does not leave servers behind.
// Throws std::runtime_error when fork fails or the program cannot be executed.
pid_t spawn(const std::string& path, const std::vector<std::string>& argv, int output_fd = -1);

// The exit status of a terminated child, or 128 + the signal that killed it,
// matching what a shell reports; -1 for the -1 "already reaped" status.
int exit_code_from_status(int status);

// Blocking waitpid that retries on EINTR. Returns the wait status, or -1 if the
// child was already reaped elsewhere.
int wait_blocking(pid_t pid);

// Polls waitpid(WNOHANG) until `pid` exits or `timeout` passes. True (and the
// status in *status when non-null) once it has exited.
bool wait_with_timeout(pid_t pid, std::chrono::milliseconds timeout, int* status);

// Blocks SIGPIPE in the calling thread while alive, and swallows a SIGPIPE
// raised in that window. hiredis's blocking writes use write(), so a write to a
// server that was just killed would otherwise end the whole test process. The
// disposition stays untouched so the library under test still has to cope with
// SIGPIPE on its own.
class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t previous_mask_{};
  bool was_pending_ = false;
};

}  // namespace warden::test::detail
