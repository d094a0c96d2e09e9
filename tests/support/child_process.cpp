#include "child_process.hpp"

#include <utility>

#include "detail/process.hpp"

namespace warden::test {

ChildProcess::ChildProcess(const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = detail::spawn(detail::resolve_program(program), argv);
  reaped_ = false;
}

ChildProcess::~ChildProcess() { reap_now(); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), reaped_(std::exchange(other.reaped_, true)), exit_code_(other.exit_code_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    reap_now();
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = std::exchange(other.reaped_, true);
    exit_code_ = other.exit_code_;
  }
  return *this;
}

void ChildProcess::reap_now() noexcept {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  detail::wait_blocking(pid_);
  reaped_ = true;
}

pid_t ChildProcess::pid() const { return pid_; }

int ChildProcess::wait() {
  if (!reaped_) {
    exit_code_ = detail::exit_code_from_status(detail::wait_blocking(pid_));
    reaped_ = true;
  }
  return exit_code_;
}

bool ChildProcess::wait_for(std::chrono::milliseconds timeout, int* exit_code) {
  if (!reaped_) {
    int status = 0;
    if (!detail::wait_with_timeout(pid_, timeout, &status)) return false;
    exit_code_ = detail::exit_code_from_status(status);
    reaped_ = true;
  }
  if (exit_code != nullptr) *exit_code = exit_code_;
  return true;
}

void ChildProcess::kill(int signal) {
  if (!reaped_) ::kill(pid_, signal);
}

}  // namespace warden::test
