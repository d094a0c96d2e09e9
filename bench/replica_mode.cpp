#include "replica_mode.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include <warden/warden.hpp>

#include "cpu_time.hpp"
#include "hiredis_loop.hpp"
#include "records.hpp"
#include "scale_common.hpp"
#include "scenario.hpp"
#include "server.hpp"
#include "server_probes.hpp"
#include "stats.hpp"
#include "target.hpp"

namespace warden_bench {

namespace {

constexpr unsigned rtt_samples = 1000;

// One column of the report: a loop run or an S1 run, reduced to the same
// figures.
struct column {
  std::string name;
  bool ok = false;
  std::string error;
  std::uint64_t pairs = 0;
  double pairs_per_s = 0;
  distribution pair_latency;
  double client_cpu_s = -1;
  double server_cpu_s = -1;  // master and replica
  context_switches switches;
  std::map<std::string, std::uint64_t> commands;  // on the master; empty: unknown
  std::uint64_t violations = 0;

  double per_pair(double total) const { return total >= 0 && pairs > 0 ? total / static_cast<double>(pairs) : -1; }
  // Wall time per pair, ns: the window ÷ the pairs done in it.
  double time_per_pair_ns() const { return ok && pairs_per_s > 0 ? 1e9 / pairs_per_s : -1; }
  double client_cpu_ns() const { return per_pair(client_cpu_s * 1e9); }
  double server_cpu_ns() const { return per_pair(server_cpu_s * 1e9); }
  double commands_per_pair(std::string_view name) const {
    if (commands.empty()) return -1;
    auto it = commands.find(std::string{name});
    return per_pair(static_cast<double>(it == commands.end() ? 0 : it->second));
  }
  double all_commands_per_pair() const {
    if (commands.empty()) return -1;
    std::uint64_t n = 0;
    for (const auto& [name, calls] : commands) n += calls;
    return per_pair(static_cast<double>(n));
  }
};

std::map<std::string, std::uint64_t> delta(const std::map<std::string, std::uint64_t>& stop,
                                           const std::map<std::string, std::uint64_t>& start) {
  std::map<std::string, std::uint64_t> out;
  if (stop.empty() || start.empty()) return out;
  for (const auto& [name, calls] : stop) {
    if (name == "info") continue;  // the bench's own sampling
    auto it = start.find(name);
    const std::uint64_t before = it == start.end() ? 0 : it->second;
    if (calls > before) out[name] = calls - before;
  }
  if (out.empty()) out["info"] = 0;  // known, and nothing ran
  return out;
}

column from_loop(std::string name, const loop_result& r, std::map<std::string, std::uint64_t> commands) {
  column c;
  c.name = std::move(name);
  c.ok = r.ran && r.ok;
  c.error = r.error;
  c.pairs = r.pairs;
  c.pairs_per_s = r.pairs_per_s;
  c.pair_latency = r.pair_latency;
  c.client_cpu_s = r.client_cpu_s;
  c.server_cpu_s = r.server_cpu_s;
  c.switches = r.client_switches;
  c.commands = std::move(commands);
  return c;
}

column from_scenario(std::string name, const scenario_result& r) {
  column c;
  c.name = std::move(name);
  c.ok = r.lock_errors + r.unlock_errors == 0 && r.pairs_in_window > 0;
  c.error = r.first_error;
  c.pairs = r.pairs_in_window;
  c.pairs_per_s = r.pairs_per_s;
  c.pair_latency = r.pair_latency;
  c.client_cpu_s = r.client_cpu_s;
  c.server_cpu_s = r.server_cpu_s;
  c.switches = r.client_switches;
  if (r.commands_known) c.commands = r.server_commands;
  if (c.commands.empty() && r.commands_known) c.commands["info"] = 0;
  c.violations = r.violations();
  return c;
}

std::string ns_or_na(double ns) { return ns >= 0 ? format_ns(static_cast<std::int64_t>(ns)) : std::string("n/a"); }

// A difference of two per-pair figures, signed ("+41.2 µs", "−3.10 µs").
std::string added(double with, double without) {
  if (with < 0 || without < 0) return "n/a";
  const double d = with - without;
  return fmt::format("{}{}", d < 0 ? "−" : "+", format_ns(static_cast<std::int64_t>(d < 0 ? -d : d)));
}

std::string quotient(double value, double reference) {
  return value >= 0 && reference > 0 ? fmt::format("{:.2f}", value / reference) : std::string("n/a");
}

std::string per_pair_count(double n) { return n >= 0 ? fmt::format("{:.3g}", n) : std::string("n/a"); }

std::string switches_per_pair(const column& c) {
  if (c.switches.voluntary < 0 || c.pairs == 0) return "n/a";
  return fmt::format("{:.1f} / {:.1f}", c.per_pair(static_cast<double>(c.switches.voluntary)),
                     c.per_pair(static_cast<double>(c.switches.involuntary)));
}

std::string p50_p99(const distribution& d) {
  return d.count == 0 ? std::string("n/a") : fmt::format("{} / {}", format_ns(d.p50), format_ns(d.p99));
}

// Keeps count of what warden logs at warning level and above, and echoes it.
struct log_count {
  std::mutex mutex;
  std::uint64_t count = 0;
  std::string first;
};

// S1 on a Client of its own made from `config`: warmed up (connections,
// script loads, the first ROLE), run for the window, then destroyed.
scenario_result run_s1(const warden::Config& base, warden::replica_sync_mode mode, const std::string& name,
                       const run_settings& settings, const std::shared_ptr<log_count>& logs) {
  warden::Config config = base;
  config.replica_sync.mode = mode;
  config.logger = [logs](warden::log_level level, std::string_view message) {
    if (level != warden::log_level::warning && level != warden::log_level::error) return;
    fmt::print(stderr, "warden {}: {}\n", level == warden::log_level::error ? "error" : "warning", message);
    std::lock_guard<std::mutex> guard(logs->mutex);
    if (logs->count++ == 0) logs->first = std::string{message};
  };
  warden::Client client{config};
  run_settings warm = settings;
  warm.duration_s = 0.3;
  warm.records = nullptr;
  const scenario_result w =
      run_scenario(client, {name + "-warm-up", "1 thread, 1 lock", 1, 1, bound_kind::none, make_plain_lock}, warm);
  if (w.acquisitions == 0) {
    scenario_result failed;
    failed.spec.name = name;
    failed.first_error = fmt::format("warm-up could not take a single lock: {}", w.first_error);
    failed.lock_errors = 1;
    return failed;
  }
  fmt::print(stderr, "running {} (S1, replica_sync {}) for {:g} s...\n", name,
             mode == warden::replica_sync_mode::off ? "off" : "at_least_one", settings.duration_s);
  return run_scenario(client, {name, "1 thread, 1 lock", 1, 1, bound_kind::none, make_plain_lock}, settings);
}

void print_report(std::FILE* out, const std::string& header, const std::vector<column>& cols,
                  const std::vector<std::string>& notes) {
  const column& loop = cols[0];
  const column& loop_wait = cols[1];
  const column& off = cols[2];
  const column& on = cols[3];
  fmt::print(out, "# warden-bench --replica\n\n{}\n\n", header);
  fmt::print(out, "| | {} | {} | {} | {} |\n|---|--:|--:|--:|--:|\n", loop.name, loop_wait.name, off.name, on.name);
  auto row = [&](const char* label, auto&& cell) {
    fmt::print(out, "| {} | {} | {} | {} | {} |\n", label, cell(loop), cell(loop_wait), cell(off), cell(on));
  };
  row("pairs/s (lock + unlock)", [](const column& c) { return c.ok ? format_rate(c.pairs_per_s) : "failed"; });
  row("time per pair (1 ÷ pairs/s)", [](const column& c) { return ns_or_na(c.time_per_pair_ns()); });
  row("pair latency p50 / p99", [](const column& c) { return p50_p99(c.pair_latency); });
  row("client CPU per pair", [](const column& c) { return ns_or_na(c.client_cpu_ns()); });
  row("redis-server CPU per pair (master + replica)", [](const column& c) { return ns_or_na(c.server_cpu_ns()); });
  row("client context switches per pair, voluntary / involuntary",
      [](const column& c) { return switches_per_pair(c); });
  row("commands per pair on the master: scripts / WAIT / all", [](const column& c) {
    return fmt::format("{} / {} / {}", per_pair_count(c.commands_per_pair("evalsha") + c.commands_per_pair("eval")),
                       per_pair_count(c.commands_per_pair("wait")), per_pair_count(c.all_commands_per_pair()));
  });
  // warden against the loop of the same kind: S1 against the loop, S1 with
  // WAIT against the loop with WAIT.
  fmt::print(out, "| pairs/s ÷ the loop's of the same kind | – | – | {} | {} |\n",
             quotient(off.pairs_per_s, loop.pairs_per_s), quotient(on.pairs_per_s, loop_wait.pairs_per_s));
  fmt::print(out, "| client CPU per pair ÷ the loop's of the same kind | – | – | {} | {} |\n",
             quotient(off.client_cpu_ns(), loop.client_cpu_ns()),
             quotient(on.client_cpu_ns(), loop_wait.client_cpu_ns()));
  fmt::print(out, "| mutual-exclusion violations | – | – | {} | {} |\n\n", off.violations, on.violations);

  fmt::print(out, "The cost of WAIT per pair (with WAIT less without, same run):\n\n");
  fmt::print(out, "| | plain-hiredis loop | warden S1 | warden ÷ loop |\n|---|--:|--:|--:|\n");
  auto cost_row = [&](const char* label, double loop_with, double loop_without, double w_with, double w_without) {
    const double loop_cost = loop_with >= 0 && loop_without >= 0 ? loop_with - loop_without : -1;
    const double warden_cost = w_with >= 0 && w_without >= 0 ? w_with - w_without : -1;
    fmt::print(out, "| {} | {} | {} | {} |\n", label, added(loop_with, loop_without), added(w_with, w_without),
               loop_cost > 0 && warden_cost >= 0 ? fmt::format("{:.2f}", warden_cost / loop_cost) : "n/a");
  };
  cost_row("time per pair", loop_wait.time_per_pair_ns(), loop.time_per_pair_ns(), on.time_per_pair_ns(),
           off.time_per_pair_ns());
  cost_row("pair latency p50", loop_wait.pair_latency.count ? static_cast<double>(loop_wait.pair_latency.p50) : -1,
           loop.pair_latency.count ? static_cast<double>(loop.pair_latency.p50) : -1,
           on.pair_latency.count ? static_cast<double>(on.pair_latency.p50) : -1,
           off.pair_latency.count ? static_cast<double>(off.pair_latency.p50) : -1);
  cost_row("client CPU per pair", loop_wait.client_cpu_ns(), loop.client_cpu_ns(), on.client_cpu_ns(),
           off.client_cpu_ns());
  cost_row("redis-server CPU per pair (master + replica)", loop_wait.server_cpu_ns(), loop.server_cpu_ns(),
           on.server_cpu_ns(), off.server_cpu_ns());
  fmt::print(out, "| pairs/s with ÷ without | {} | {} | – |\n\n", quotient(loop_wait.pairs_per_s, loop.pairs_per_s),
             quotient(on.pairs_per_s, off.pairs_per_s));
  for (const auto& note : notes) fmt::print(out, "- {}\n", note);
}

}  // namespace

int run_replica_mode(const options& opts) {
  install_server_cleanup_handlers();
  const std::string load_at_start = load_average();

  bench_target target = open_target(opts);
  fmt::print(stderr, "starting a replica of {}...\n", target.home_address);
  auto replica = redis_server::start_replica_of(target.server->port());
  warden::Config replica_config;
  replica_config.host = "127.0.0.1";
  replica_config.port = replica->port();

  // CPU of both servers (the replica applies every write, and answers the
  // master's GETACK); commands on the master only, where the bench sends them.
  auto cpu_probe = std::make_shared<server_cpu_probe>(std::vector<warden::Config>{target.home, replica_config});
  auto server_cpu = [cpu_probe] { return (*cpu_probe)(); };
  auto commands_probe = std::make_shared<server_commands_probe>(std::vector<warden::Config>{target.home});
  const std::string key_prefix = fmt::format("warden-bench:{}.{:x}:", ::getpid(), now_ns() & 0xffffff);
  const std::chrono::duration<double> duration(opts.duration_s);
  // What warden's WAIT asks for with the default settings: one replica
  // (at_least_one), ReplicaSyncConfig::timeout (the command's deadline is
  // further off than that, so it is not cut shorter).
  const std::chrono::milliseconds wait_timeout = target.client.replica_sync.timeout;

  std::vector<column> cols;
  std::vector<std::string> notes;
  distribution rtt;
  bool failed = false;
  // The loops first, before any Client exists, so the process's CPU is the
  // loop thread's alone.
  try {
    hiredis_loop loop(target.home, key_prefix + "loop:0");
    rtt = loop.ping_round_trip(rtt_samples);
    for (int with_wait = 0; with_wait < 2; ++with_wait) {
      if (with_wait) loop.wait_after_writes(1, wait_timeout);
      fmt::print(stderr, "running the plain-hiredis loop{} for {:g} s...\n",
                 with_wait ? fmt::format(" with WAIT 1 {}", wait_timeout.count()) : std::string(), opts.duration_s);
      const auto commands_start = (*commands_probe)();
      const loop_result r = loop.run(duration, std::chrono::nanoseconds::zero(), server_cpu);
      cols.push_back(
          from_loop(with_wait ? "loop + WAIT" : "plain-hiredis loop", r, delta((*commands_probe)(), commands_start)));
    }
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("plain-hiredis loop: could not set up: {}", e.what()));
    while (cols.size() < 2) {
      column missing;
      missing.name = cols.empty() ? "plain-hiredis loop" : "loop + WAIT";
      missing.error = "not run";
      cols.push_back(std::move(missing));
    }
  }

  auto logs = std::make_shared<log_count>();
  run_settings settings;
  settings.duration_s = opts.duration_s;
  settings.key_prefix = key_prefix;
  settings.hang_grace_s = 60;
  settings.server_cpu_s = server_cpu;
  settings.server_commands = [commands_probe] { return (*commands_probe)(); };
  settings.on_hang = [] {
    kill_server_now();
    std::fflush(stdout);
    std::_Exit(3);
  };
  cols.push_back(from_scenario("S1, replica_sync off",
                               run_s1(target.client, warden::replica_sync_mode::off, "S1", settings, logs)));
  cols.push_back(from_scenario("S1W, replica_sync at_least_one",
                               run_s1(target.client, warden::replica_sync_mode::at_least_one, "S1W", settings, logs)));

  for (const auto& c : cols) {
    if (!c.error.empty()) notes.push_back(fmt::format("{}: {}", c.name, c.error));
    failed = failed || !c.ok || c.violations != 0;
  }
  if (logs->count > 0) {
    notes.push_back(fmt::format("warden logged {} warning(s)/error(s); the first: `{}`", logs->count, logs->first));
  }
  notes.push_back(fmt::format(
      "The loop with WAIT sends WAIT 1 {} after each EVALSHA on the same connection, as warden does after each lock "
      "write with replica_sync at_least_one (the write on a connection of its own, then WAIT with "
      "ReplicaSyncConfig::timeout), and counts a pair only when both WAITs answered 1. Both loops ran before any "
      "Client existed; each S1 ran on a Client of its own, made, warmed up (0.3 s) and destroyed in turn.",
      wait_timeout.count()));
  notes.push_back(
      "Time per pair is the window ÷ the pairs done in it; the cost of WAIT per pair is that time with WAIT less "
      "without, for the loop and for warden, from runs of the same process seconds apart. Pair latency is from "
      "lock()'s start to unlock()'s return (for the loop: the acquire sent to the release answered, WAITs "
      "included).");
  notes.push_back(
      "On a 2-core machine the master, the replica, the bench and warden's I/O thread share the CPUs: WAIT's "
      "round trip includes the replica being scheduled to apply the write and acknowledge it.");

  const std::string header = fmt::format(
      "Master {} (throw-away redis-server, pid {}); replica 127.0.0.1:{} (throw-away, pid {}, --replicaof the "
      "master, link up before the first run). {:g} s per run; {} CPUs; load average at start {}, at end {}. "
      "Loopback round trip (blocking PING on the loop's connection): median {}, p99 {}.",
      target.home_address, target.server->pid(), replica->port(), replica->pid(), opts.duration_s,
      std::thread::hardware_concurrency(), load_at_start.empty() ? "n/a" : load_at_start,
      load_average().empty() ? "n/a" : load_average(), rtt.count ? format_ns(rtt.p50) : "n/a",
      rtt.count ? format_ns(rtt.p99) : "n/a");
  print_report(stdout, header, cols, notes);
  replica->stop();
  return failed ? 1 : 0;
}

}  // namespace warden_bench
