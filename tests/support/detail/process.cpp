#include "detail/process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace warden::test::detail {

namespace {

bool is_executable_file(const std::string& path) {
  // access(X_OK) alone also accepts directories.
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The highest descriptor the child might have inherited, computed before fork
// because getrlimit is not on the async-signal-safe list. Capped so a huge
// RLIMIT_NOFILE does not turn the fallback loop into a million close() calls.
int highest_possible_fd() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return 65535;
  }
  return limit.rlim_cur > 65536 ? 65535 : static_cast<int>(limit.rlim_cur) - 1;
}

// Closes every descriptor >= 3 except `keep`. Without this a redis-server
// would inherit the test's client sockets and keep them half-alive after the
// test closed them, which hides disconnects from the other side.
void close_inherited_fds(int keep, int highest) {
#ifdef SYS_close_range
  bool ok = true;
  if (keep > 3) ok = syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u) == 0;
  if (ok && syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u) == 0) return;
#endif
  // Kernels before 5.9 have no close_range.
  for (int fd = 3; fd <= highest; ++fd) {
    if (fd != keep) close(fd);
  }
}

}  // namespace

std::string resolve_program(const std::string& program, const std::string& fallback) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    // An empty PATH entry means the current directory.
    std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
    std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    begin = end + 1;
  }
  return fallback.empty() ? program : fallback;
}

pid_t spawn(const std::string& path, const std::vector<std::string>& argv_strings, int output_fd) {
  // Everything the child needs is prepared here: after fork in a threaded
  // process only async-signal-safe calls are allowed until exec.
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (const auto& arg : argv_strings) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const char* file = path.c_str();
  const int highest = highest_possible_fd();

  // The child reports a failed exec through this pipe; a successful exec
  // closes it (O_CLOEXEC), so the parent reads EOF.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  int dev_null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (dev_null < 0) {
    int error = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    throw std::system_error(error, std::generic_category(), "open /dev/null");
  }

  // PR_SET_PDEATHSIG fires when the *thread* that forked exits, not the
  // process. Only the main thread lives as long as the process, so children
  // spawned from other threads are not tied (they are still stopped by their
  // owners' destructors).
  const bool tie_to_parent = syscall(SYS_gettid) == getpid();
  const pid_t parent = getpid();

  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    close(dev_null);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (pid == 0) {
    if (tie_to_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      // The parent may have died before prctl took effect.
      if (getppid() != parent) _exit(127);
    }
    dup2(dev_null, STDIN_FILENO);
    if (output_fd >= 0) {
      dup2(output_fd, STDOUT_FILENO);
      dup2(output_fd, STDERR_FILENO);
    }
    close_inherited_fds(error_pipe[1], highest);
    // Ignored dispositions and blocked signals survive exec; a server that
    // inherited a blocked SIGTERM could never be stopped.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int signal_number : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) {
      signal(signal_number, SIG_DFL);
    }
    execv(file, argv.data());
    int error = errno;
    ssize_t ignored = write(error_pipe[1], &error, sizeof error);
    (void)ignored;
    _exit(127);
  }

  close(error_pipe[1]);
  close(dev_null);
  int exec_error = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_error)) {
    wait_blocking(pid);
    throw std::runtime_error("cannot execute " + path + ": " + std::strerror(exec_error));
  }
  return pid;
}

int exit_code_from_status(int status) {
  if (status == -1) return -1;  // reaped elsewhere: the code is unknown
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int wait_blocking(pid_t pid) {
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, 0);
    if (r == pid) return status;
    if (r < 0 && errno == EINTR) continue;
    return -1;
  }
}

bool wait_with_timeout(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int s = 0;
    pid_t r = waitpid(pid, &s, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) {
      if (status != nullptr) *status = r == pid ? s : -1;
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // waitpid cannot wait with a timeout; short naps keep the latency low.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

SigpipeGuard::SigpipeGuard() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &previous_mask_);
}

SigpipeGuard::~SigpipeGuard() {
  // A SIGPIPE raised by our own write is directed at this thread; consume it
  // before unblocking so it is never delivered. One that was already pending
  // belongs to someone else and is left alone.
  if (!was_pending_) {
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      sigset_t only_pipe;
      sigemptyset(&only_pipe);
      sigaddset(&only_pipe, SIGPIPE);
      timespec zero{0, 0};
      while (sigtimedwait(&only_pipe, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

}  // namespace warden::test::detail
