// warden-bench: the burst mode (see burst.hpp).
#include "burst.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <warden/warden.hpp>

#include "cpu_time.hpp"
#include "records.hpp"
#include "scale_common.hpp"
#include "server.hpp"
#include "target.hpp"

namespace warden_bench {

namespace {

using steady = std::chrono::steady_clock;

double seconds_between(steady::time_point from, steady::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// What the completions saw; written on warden's I/O thread, read once all
// have come.
struct tally {
  std::mutex mutex;
  std::condition_variable all_done;
  std::size_t done = 0;
  std::size_t acquired = 0;
  std::size_t timed_out = 0;
  std::size_t other = 0;
  std::string first_other;
  steady::time_point last_success{};
  steady::time_point first_failure = steady::time_point::max();
  steady::time_point last_failure{};
  // Answers per second since the first call: successes, failures.
  std::vector<std::size_t> acquired_per_s;
  std::vector<std::size_t> failed_per_s;
};

void count_in(std::vector<std::size_t>& per_s, double at_s) {
  auto second = static_cast<std::size_t>(at_s < 0 ? 0 : at_s);
  if (per_s.size() <= second) per_s.resize(second + 1, 0);
  ++per_s[second];
}

std::string per_second(const std::vector<std::size_t>& counts, std::size_t seconds) {
  std::string out;
  for (std::size_t i = 0; i < seconds; ++i) out += fmt::format("{}{}", i ? " " : "", i < counts.size() ? counts[i] : 0);
  return out;
}

}  // namespace

int run_burst_mode(const options& opts) {
  install_server_cleanup_handlers();
  bench_target target = open_target(opts);
  if (target.is_cluster()) throw std::runtime_error("--burst runs on one server only");
  const std::size_t burst = *opts.burst;
  const auto lease = std::chrono::milliseconds(opts.lease_ms.value_or(30'000));
  const std::string prefix = fmt::format("warden-bench:{}.{:x}:burst:", ::getpid(), now_ns() & 0xffffff);

  fmt::print("burst: {} lock_async calls at once on free locks, lease {} ms, one Client ({})\n", burst, lease.count(),
             target.description);
  fmt::print("  command_timeout {} ms\n", target.client.command_timeout.count());
  std::fflush(stdout);

  if (std::getenv("BURST_SYNC_OFF")) target.client.replica_sync.mode = warden::replica_sync_mode::off;
  // A callback hears only errc::timed_out; the failure's text, logged at
  // debug level, says whether the try was never written ("not sent").
  auto unsent = std::make_shared<std::atomic<std::size_t>>(0);
  target.client.logger = [unsent](warden::log_level level, std::string_view message) {
    if (level == warden::log_level::debug && message.find("not sent") != std::string_view::npos) ++*unsent;
  };
  server_stats stats(target.home);
  auto client = std::make_unique<warden::Client>(target.client);
  // Connected and the scripts loaded before the clock starts.
  client->get_lock(prefix + "warm-up").lock(warden::lock_options().with_lease(lease));
  client->get_lock(prefix + "warm-up").unlock();

  tally seen;
  const std::uint64_t scripts_before = stats.script_calls();
  const double server_cpu_before = stats.cpu_s();
  const double client_cpu_before = process_cpu_s();
  const auto started = steady::now();
  for (std::size_t i = 0; i < burst; ++i) {
    client->get_lock(prefix + std::to_string(i))
        .lock_async(warden::new_owner_id(), warden::lock_options().with_lease(lease),
                    [&seen, burst, started](std::error_code error) {
                      auto now = steady::now();
                      std::lock_guard<std::mutex> guard(seen.mutex);
                      count_in(error ? seen.failed_per_s : seen.acquired_per_s, seconds_between(started, now));
                      if (!error) {
                        ++seen.acquired;
                        seen.last_success = now;
                      } else {
                        if (error == warden::errc::timed_out) {
                          ++seen.timed_out;
                        } else if (seen.other++ == 0) {
                          seen.first_other = error.message();
                        }
                        if (seen.first_failure == steady::time_point::max()) seen.first_failure = now;
                        seen.last_failure = now;
                      }
                      if (++seen.done == burst) seen.all_done.notify_all();
                    });
  }
  const auto issued = steady::now();
  {
    std::unique_lock<std::mutex> guard(seen.mutex);
    seen.all_done.wait(guard, [&] { return seen.done == burst; });
  }
  const auto finished = steady::now();
  const std::size_t not_sent = unsent->load();
  const double client_cpu = process_cpu_s() - client_cpu_before;
  const std::uint64_t scripts_by_end = stats.script_calls() - scripts_before;
  const double server_cpu = stats.cpu_s() - server_cpu_before;

  fmt::print("  issued in {:.2f} s; every call answered after {:.2f} s\n", seconds_between(started, issued),
             seconds_between(started, finished));
  fmt::print(
      "  acquired {} (the last at {:.2f} s), failed {} (timed out {}: {} of them unsent, {} after they were written; "
      "other {}){}\n",
      seen.acquired, seen.acquired ? seconds_between(started, seen.last_success) : 0.0, seen.timed_out + seen.other,
      seen.timed_out, not_sent, seen.timed_out - std::min(seen.timed_out, not_sent), seen.other,
      seen.other ? " first other: " + seen.first_other : std::string());
  if (seen.timed_out + seen.other != 0) {
    fmt::print("  failures from {:.2f} s to {:.2f} s\n", seconds_between(started, seen.first_failure),
               seconds_between(started, seen.last_failure));
  }
  {
    std::size_t seconds = std::max(seen.acquired_per_s.size(), seen.failed_per_s.size());
    fmt::print("  acquired per second: {}\n", per_second(seen.acquired_per_s, seconds));
    fmt::print("  failed per second:   {}\n", per_second(seen.failed_per_s, seconds));
  }
  fmt::print("  scripts at the server by then: {} ({:.2f} per call); server CPU {:.2f} s; client CPU {:.2f} s\n",
             scripts_by_end, static_cast<double>(scripts_by_end) / static_cast<double>(burst), server_cpu, client_cpu);
  std::fflush(stdout);

  // The minute after: every call has its answer, so what the server still
  // runs is background work (settling lost attempts, take-backs).
  const int windows = opts.burst_watch_s / 10;
  std::uint64_t last = stats.script_calls();
  double last_cpu = stats.cpu_s();
  std::uint64_t after_total = 0;
  for (int w = 0; w < windows; ++w) {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    std::uint64_t now_calls = stats.script_calls();
    double now_cpu = stats.cpu_s();
    after_total += now_calls - last;
    fmt::print("  after +{:>3} s: {} scripts in 10 s, server CPU {:.1f} %\n", (w + 1) * 10, now_calls - last,
               (now_cpu - last_cpu) * 10);
    std::fflush(stdout);
    last = now_calls;
    last_cpu = now_cpu;
  }
  fmt::print("  scripts in the {} s after: {}\n", windows * 10, after_total);
  // Every key is a hold taken (or an attempt's cancel mark): a failure that
  // took effect at the server would show as more keys than acquires.
  fmt::print("  keys at the server now: {} (acquired {})\n", stats.connection().command({"DBSIZE"}), seen.acquired);
  fmt::print("  acquire scripts per success: {:.3f} (1 = nothing but the acquires that succeeded reached the server)\n",
             seen.acquired ? static_cast<double>(scripts_by_end) / static_cast<double>(seen.acquired) : 0.0);
  client.reset();
  return seen.other == 0 ? 0 : 1;
}

}  // namespace warden_bench
