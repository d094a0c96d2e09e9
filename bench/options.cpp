#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace warden_bench {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::vector<std::string> parse_scenarios(const std::string& list) {
  std::vector<std::string> out;
  std::string_view rest = list;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string name = upper(std::string{rest.substr(0, comma)});
    if (name != "S1" && name != "S2" && name != "S3") {
      throw usage_error(fmt::format("--scenarios: unknown scenario '{}' (known: S1, S2, S3)", name));
    }
    // Running a scenario twice would only mix two runs' lock names; once is enough.
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (out.empty()) throw usage_error("--scenarios: empty list");
  return out;
}

double parse_duration(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0) {
    throw usage_error(fmt::format("--duration: '{}' is not a positive number of seconds", text));
  }
  return v;
}

}  // namespace

options parse_options(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw usage_error(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw usage_error(fmt::format("{} takes no value", arg));
    };

    if (arg == "--url") {
      opts.url = value();
    } else if (arg == "--duration") {
      opts.duration_s = parse_duration(value());
    } else if (arg == "--scenarios") {
      opts.scenarios = parse_scenarios(value());
    } else if (arg == "--records") {
      opts.records_path = value();
    } else if (arg == "--fair") {
      no_value();
      opts.fair = true;
    } else if (arg == "--help" || arg == "-h") {
      no_value();
      opts.help = true;
    } else {
      throw usage_error(fmt::format("unknown option '{}'", arg));
    }
  }
  return opts;
}

void print_usage(std::FILE* out) {
  std::fputs(
      R"(usage: warden-bench [options]

Measures warden::Lock against what the same Redis server can do at all
(redis-benchmark running EVALSHA of an HINCRBY + PEXPIRE script), and prints a
markdown table with the targets and PASS/MISS.

Scenarios (all threads share one warden::Client):
  S1  one thread, one lock:   lock(); unlock(); in a loop
  S2  eight threads, one lock
  S3  eight threads, 64 locks: worker i takes lock (i + k) % 64 on its k-th pair

Options:
  --url redis://[[user]:password@]host[:port][/db]
                      use this server. Default: start a throw-away redis-server
                      on a free loopback port (--save "" --appendonly no) and
                      stop it (by pid) at exit
  --duration SECONDS  length of each scenario and of each redis-benchmark run
                      (default 5)
  --scenarios LIST    comma-separated subset of S1,S2,S3 (default all)
  --records FILE      write one CSV line per acquisition:
                        t_acq_start_ns,t_enter_ns,t_exit_ns,t_rel_done_ns,lock,worker
                      steady_clock nanoseconds; lock is "<scenario>:<index>",
                      worker the thread's index within its scenario
  --fair              also run S2 on a FairLock (S2F), once warden has one;
                      until then accepted and ignored with a note
  --help              this text

Exit status: 0 finished (targets may still be MISS), 1 mutual-exclusion
violations or lock errors, 2 bad usage or setup failure, 3 a scenario hung.
)",
      out);
}

}  // namespace warden_bench
