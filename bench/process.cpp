#include "process.hpp"

#include <cstdio>
#include <cstdlib>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace warden_bench {

std::optional<std::string> find_on_path(std::string_view name) {
  const char* path = std::getenv("PATH");
  // POSIX leaves an unset PATH implementation-defined; this is glibc's choice.
  std::string_view dirs = path ? path : "/bin:/usr/bin";
  while (true) {
    const auto colon = dirs.find(':');
    std::string dir{dirs.substr(0, colon)};
    // An empty PATH entry means the current directory.
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + std::string{name};
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

namespace {

// 'it'\''s' — the only character that needs care inside single quotes is the
// single quote itself.
std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

}  // namespace

captured_output run_capture(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& arg : argv) {
    if (!command.empty()) command += ' ';
    command += shell_quote(arg);
  }
  // Errors (bad password, unknown command) go to stderr; folding it in lets
  // the caller show them when it cannot find the figure it expected.
  command += " 2>&1";

  captured_output result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    result.output = "popen failed";
    return result;
  }
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
}

}  // namespace warden_bench
