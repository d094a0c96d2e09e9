// warden-inspect's command line: what to do, parsed without touching Redis.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace warden::inspect {

struct Options {
  enum class action { show, scan, help, version };

  action what = action::show;
  std::string url = "redis://127.0.0.1:6379";
  std::string name;     // show: the lock's name
  std::string pattern;  // scan: a SCAN MATCH pattern
  bool json = false;
  bool watch = false;
  std::chrono::milliseconds interval{1000};  // --watch: between refreshes
  std::optional<long> count;                 // --watch: refreshes, then exit (default: until interrupted)
  bool force_unlock = false;
  bool yes = false;                         // --force-unlock without asking
  std::chrono::milliseconds timeout{3000};  // connect and command timeout
};

// Parses argv (without the program name). Throws std::invalid_argument with a
// message for the user when the arguments make no sense.
Options parse(const std::vector<std::string>& args);

// The manual page --help prints.
const char* manual();

}  // namespace warden::inspect
