#include "redis_bound.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "process.hpp"
#include "redis_sync.hpp"

namespace warden_bench {

const char* const bound_script =
    "redis.call('hincrby', KEYS[1], ARGV[1], 1); "
    "redis.call('pexpire', KEYS[1], ARGV[2]); "
    "return nil";

std::string load_bound_script(const warden::Config& server) {
  auto connection = redis_sync::connect(server, std::chrono::seconds(5));
  return connection.command({"SCRIPT", "LOAD", bound_script});
}

namespace {

// Splits one line of redis-benchmark --csv output: every field is quoted and
// none of ours contains a quote, so no escape handling is needed.
std::vector<std::string> split_quoted_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

std::optional<double> to_double(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  return v;
}

// One redis-benchmark run. Its --csv output is a header line
// ("test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
// "p95_latency_ms","p99_latency_ms","max_latency_ms") and one line per test.
bound_result run_once(const std::string& binary, const warden::Config& server, const std::string& sha,
                      const std::string& key, unsigned connections, std::uint64_t requests, bool cluster) {
  std::vector<std::string> argv = {binary,
                                   "-h",
                                   server.host,
                                   "-p",
                                   std::to_string(server.port),
                                   "-c",
                                   std::to_string(connections),
                                   "-n",
                                   std::to_string(requests),
                                   "--csv"};
  if (cluster) argv.push_back("--cluster");
  if (!server.password.empty()) {
    if (!server.username.empty()) {
      argv.push_back("--user");
      argv.push_back(server.username);
    }
    argv.push_back("-a");
    argv.push_back(server.password);
  }
  if (server.database != 0) {
    argv.push_back("--dbnum");
    argv.push_back(std::to_string(server.database));
  }
  for (const char* a : {"EVALSHA", sha.c_str(), "1", key.c_str(), "field", "30000"}) argv.emplace_back(a);

  bound_result result;
  result.connections = connections;
  result.requests = requests;
  const captured_output out = run_capture(argv);
  std::istringstream lines(out.output);
  std::string line;
  while (std::getline(lines, line)) {
    const auto fields = split_quoted_csv(line);
    if (fields.size() < 2 || fields[0].rfind("EVALSHA", 0) != 0) continue;
    const auto rps = to_double(fields[1]);
    if (!rps || *rps <= 0) continue;
    result.ops_per_s = *rps;
    if (fields.size() >= 7) {
      result.p50_ms = to_double(fields[4]).value_or(0);
      result.p99_ms = to_double(fields[6]).value_or(0);
    }
    result.ok = true;
  }
  if (out.exit_status != 0 || !result.ok) {
    result.ok = false;
    result.error = fmt::format("redis-benchmark -c {} exited with status {}; output:\n{}", connections, out.exit_status,
                               out.output);
  }
  return result;
}

}  // namespace

bound_result measure_bound(const warden::Config& server, const std::string& sha, const std::string& key,
                           unsigned connections, double seconds, bool cluster) {
  const auto binary = find_on_path("redis-benchmark");
  if (!binary) {
    bound_result missing;
    missing.connections = connections;
    missing.error = "redis-benchmark not found on PATH";
    return missing;
  }
  // redis-benchmark counts requests, not time. A run of a few thousand
  // requests per connection (a fraction of a second) tells how many make
  // `seconds`; floors keep percentiles meaningful on slow servers, the cap
  // keeps a mistyped --duration from running for hours.
  const bound_result calibration = run_once(*binary, server, sha, key, connections, 2'000ull * connections, cluster);
  if (!calibration.ok) return calibration;
  const double wanted = calibration.ops_per_s * seconds;
  const auto requests = static_cast<std::uint64_t>(std::clamp(wanted, 10'000.0, 50'000'000.0));
  return run_once(*binary, server, sha, key, connections, requests, cluster);
}

}  // namespace warden_bench
