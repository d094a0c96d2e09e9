#include "scale_common.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <malloc.h>
#include <unistd.h>

#include <fmt/format.h>

namespace warden_bench {

memory_sample sample_memory() {
  memory_sample m;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = ::mallinfo2();
  m.heap = static_cast<std::int64_t>(info.uordblks + info.hblkhd);
#endif
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    long size = 0, resident = 0;
    if (std::fscanf(f, "%ld %ld", &size, &resident) == 2) m.rss = resident * ::sysconf(_SC_PAGESIZE);
    std::fclose(f);
  }
  return m;
}

memory_sample settled_memory(int samples, std::chrono::milliseconds every) {
  memory_sample best;
  for (int i = 0; i < samples; ++i) {
    if (i != 0) std::this_thread::sleep_for(every);
    const memory_sample m = sample_memory();
    if (best.heap < 0 || (m.heap >= 0 && m.heap < best.heap)) best = m;
  }
  return best;
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  const double a = std::abs(bytes);
  if (a < 1024) return fmt::format("{:.0f} B", bytes);
  if (a < 1024.0 * 1024) return fmt::format("{:.2f} KiB", bytes / 1024);
  if (a < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
}

namespace {

// The value after "<field>:" in an INFO answer, or npos.
std::size_t field_at(const std::string& info, std::string_view field) {
  std::size_t at = 0;
  while ((at = info.find(field, at)) != std::string::npos) {
    // Whole field names only: at the start of a line, followed by ':'.
    const bool line_start = at == 0 || info[at - 1] == '\n';
    const std::size_t end = at + field.size();
    if (line_start && end < info.size() && info[end] == ':') return end + 1;
    at = end;
  }
  return std::string::npos;
}

}  // namespace

server_stats::server_stats(const warden::Config& server)
    : connection_(redis_sync::connect(server, std::chrono::seconds(10))) {}

std::uint64_t server_stats::script_calls() {
  const std::string info = connection_.command({"INFO", "commandstats"});
  std::uint64_t calls = 0;
  for (const char* name : {"cmdstat_eval", "cmdstat_evalsha", "cmdstat_eval_ro", "cmdstat_evalsha_ro"}) {
    const std::size_t at = field_at(info, name);
    if (at == std::string::npos) continue;
    const std::string_view key = "calls=";
    const std::size_t value = info.find(key, at);
    if (value != std::string::npos) calls += std::strtoull(info.c_str() + value + key.size(), nullptr, 10);
  }
  return calls;
}

double server_stats::cpu_s() {
  const std::string info = connection_.command({"INFO", "cpu"});
  double total = 0;
  for (const char* name : {"used_cpu_user", "used_cpu_sys"}) {
    const std::size_t at = field_at(info, name);
    if (at == std::string::npos) throw std::runtime_error(fmt::format("INFO cpu: no {}", name));
    total += std::strtod(info.c_str() + at, nullptr);
  }
  return total;
}

std::int64_t server_stats::info_integer(const char* section, const char* field) {
  const std::string info = connection_.command({"INFO", section});
  const std::size_t at = field_at(info, field);
  if (at == std::string::npos) throw std::runtime_error(fmt::format("INFO {}: no {}", section, field));
  return std::strtoll(info.c_str() + at, nullptr, 10);
}

std::map<std::string, std::uint64_t> server_stats::command_calls() {
  const std::string info = connection_.command({"INFO", "commandstats"});
  std::map<std::string, std::uint64_t> calls;
  // Lines "cmdstat_<name>:calls=<n>,usec=...".
  const std::string_view prefix = "cmdstat_", key = ":calls=";
  std::size_t at = 0;
  while ((at = info.find(prefix, at)) != std::string::npos) {
    const std::size_t name = at + prefix.size();
    const std::size_t colon = info.find(key, name);
    const std::size_t line_end = info.find('\n', name);
    if (colon == std::string::npos || (line_end != std::string::npos && colon > line_end)) break;
    calls[info.substr(name, colon - name)] = std::strtoull(info.c_str() + colon + key.size(), nullptr, 10);
    at = colon;
  }
  return calls;
}

std::map<std::string, std::uint64_t> command_delta(const std::map<std::string, std::uint64_t>& before,
                                                   const std::map<std::string, std::uint64_t>& after) {
  std::map<std::string, std::uint64_t> delta;
  for (const auto& [name, calls] : after) {
    auto it = before.find(name);
    const std::uint64_t was = it == before.end() ? 0 : it->second;
    if (calls > was) delta[name] = calls - was;
  }
  return delta;
}

std::string format_command_calls(const std::map<std::string, std::uint64_t>& calls) {
  std::string out;
  for (const auto& [name, n] : calls) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", name, n);
  }
  return out.empty() ? std::string("none") : out;
}

std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return {};
  double one = 0, five = 0, fifteen = 0;
  const int n = std::fscanf(f, "%lf %lf %lf", &one, &five, &fifteen);
  std::fclose(f);
  return n == 3 ? fmt::format("{:.2f} {:.2f} {:.2f}", one, five, fifteen) : std::string();
}

}  // namespace warden_bench
