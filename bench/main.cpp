// warden-bench: throughput and latency of warden locks against the bound set
// by the same Redis server. See print_usage() in options.cpp for what it runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include <warden/warden.hpp>

#include "burst.hpp"
#include "coro_scenario.hpp"
#include "hiredis_loop.hpp"
#include "hiredis_threads.hpp"
#include "lock/keys.hpp"
#include "lock_kinds.hpp"
#include "options.hpp"
#include "peer_run.hpp"
#include "records.hpp"
#include "redis_bound.hpp"
#include "redis_sync.hpp"
#include "replica_mode.hpp"
#include "report.hpp"
#include "scale.hpp"
#include "scale_common.hpp"
#include "scenario.hpp"
#include "server.hpp"
#include "server_probes.hpp"
#include "target.hpp"
#include "topology/key_slot.hpp"
#include "wake_floor.hpp"

namespace warden_bench {

namespace {

constexpr unsigned contended_threads = 8;
constexpr unsigned s3_locks = 64;
// SEM and PES: the 8 threads share a semaphore of this many permits.
constexpr unsigned semaphore_permits = 4;
// P1 and the paced loop start one pair per tick of this period.
constexpr std::chrono::milliseconds pace{10};
constexpr unsigned rtt_samples = 1000;

bool selected(const options& opts, const char* name) {
  return std::find(opts.scenarios.begin(), opts.scenarios.end(), name) != opts.scenarios.end();
}

// Keeps what warden logs at warning level and above. The logger runs on the
// client's I/O thread, so it only appends under a mutex and never blocks for
// long; the messages are echoed to stderr as they come, for a run being watched.
class log_sink {
 public:
  void add(warden::log_level level, std::string_view message) {
    const char* tag = level == warden::log_level::error ? "error" : "warning";
    fmt::print(stderr, "warden {}: {}\n", tag, message);
    std::lock_guard<std::mutex> guard(mutex_);
    ++count_;
    if (first_.size() < max_kept) first_.push_back(fmt::format("{}: {}", tag, message));
  }

  std::vector<std::string> note() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::vector<std::string> out;
    if (count_ == 0) return out;
    out.push_back(fmt::format("warden logged {} warning(s)/error(s); the first {}:", count_, first_.size()));
    for (const auto& m : first_) out.push_back(fmt::format("  `{}`", m));
    return out;
  }

 private:
  static constexpr std::size_t max_kept = 5;
  mutable std::mutex mutex_;
  std::uint64_t count_ = 0;
  std::vector<std::string> first_;
};

struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// The scenarios asked for, in the order asked. With --fair, the FairLock twin
// of S2 follows S2 when warden has FairLock; otherwise a note says why not.
std::vector<scenario_spec> plan(const options& opts, std::vector<std::string>& notes) {
  std::vector<scenario_spec> specs;
  const lock_factory fair = fair_lock_factory();
  for (const auto& name : opts.scenarios) {
    if (name == "S1") {
      specs.push_back({"S1", "1 thread, 1 lock", 1, 1, bound_kind::single_connection, make_plain_lock});
    } else if (name == "S2") {
      specs.push_back(
          {"S2", "8 threads, 1 lock", contended_threads, 1, bound_kind::eight_connections, make_plain_lock});
      if (opts.fair && fair) {
        specs.push_back({"S2F", "8 threads, 1 FairLock", contended_threads, 1, bound_kind::eight_connections, fair});
      }
      if (opts.spin) {
        specs.push_back({"S2S", "8 threads, 1 SpinLock (polling, default back-off)", contended_threads, 1,
                         bound_kind::eight_connections, make_spin_lock});
      }
    } else if (name == "S3") {
      specs.push_back({"S3", "8 threads, 64 locks round-robin", contended_threads, s3_locks,
                       bound_kind::eight_connections, make_plain_lock});
    } else if (name == "SEM") {
      specs.push_back({"SEM",
                       fmt::format("8 threads, 1 Semaphore of {} permits", semaphore_permits),
                       contended_threads,
                       1,
                       bound_kind::eight_connections,
                       semaphore_factory(semaphore_permits),
                       {},
                       {},
                       semaphore_permits});
    } else if (name == "PES") {
      specs.push_back(
          {"PES",
           fmt::format("8 threads, 1 PermitExpirableSemaphore of {} permits, watchdog-kept", semaphore_permits),
           contended_threads,
           1,
           bound_kind::eight_connections,
           permit_semaphore_factory(semaphore_permits),
           {},
           {},
           semaphore_permits});
    } else if (name == "P1") {
      specs.push_back({"P1", fmt::format("1 thread, 1 lock, one pair per {} ms tick", pace.count()), 1, 1,
                       bound_kind::none, make_plain_lock, pace});
    }
  }
  if (opts.fair && !fair) {
    notes.push_back(
        "--fair: warden has no FairLock yet (no Client::get_fair_lock), so the FairLock run of S2 "
        "was skipped; it runs as S2F once FairLock exists.");
  } else if (opts.fair && !selected(opts, "S2")) {
    notes.push_back("--fair: S2 was not selected, so neither was its FairLock twin S2F.");
  }
  if (opts.spin && !selected(opts, "S2")) {
    notes.push_back("--spin: S2 was not selected, so neither was its SpinLock twin S2S.");
  }
  return specs;
}

// What a reader of a cluster run must know: where the locks were put, how
// the yardsticks relate to them, what the server figures add up.
void cluster_notes(const bench_target& target, const std::vector<scenario_spec>& specs, const std::string& loop_publish,
                   std::vector<std::string>& notes) {
  namespace keys = warden::detail::keys;
  const auto& layout = *target.layout;
  const std::size_t masters = layout.masters().size();
  std::string spread;
  for (const auto& spec : specs) {
    if (spec.locks < 2) continue;
    std::vector<unsigned> per_master(masters, 0);
    for (const auto& name : spec.lock_names) ++per_master[layout.master_of_slot(keys::slot(name))];
    std::string counts;
    for (unsigned n : per_master) counts += fmt::format("{}{}", counts.empty() ? "" : " / ", n);
    spread += fmt::format("; {}'s {} locks: lock i on master i mod {} ({} per master)", spec.name, spec.locks, masters,
                          counts);
  }
  notes.push_back(fmt::format(
      "Cluster: lock names are picked by slot (warden's detail::keys::slot; a name whose slot another master "
      "serves gets a \"~n\" suffix). The one-lock scenarios' lock, the plain-hiredis loop's lock and the "
      "1-connection bound's key live on master 0 ({}){}.",
      target.home_address, spread));
  notes.push_back(
      "Cluster: every scenario makes sense here and none is skipped. S1, S2 and P1 take one lock, so one master does "
      "their "
      "work as a single server would, but through warden's cluster routing and its pub/sub mode; S3 works every "
      "master. S1 and P1 ÷ the loop set one node against one node; S3 ÷ the loop sets all the masters against one, "
      "and S3 ÷ the 8-connection bound sets them against redis-benchmark --cluster (its 8 connections spread over "
      "the masters, a key on each via {tag}).");
  notes.push_back(fmt::format(
      "Cluster: the plain-hiredis loop ran on master 0 alone; its release script's publish command was \"{}\", "
      "what warden sends there ({}).",
      loop_publish,
      loop_publish == "spublish" ? "shard channels: waiters SSUBSCRIBE on the lock's master"
                                 : "classic pub/sub, heard by every node"));
  notes.push_back(fmt::format(
      "Cluster: redis-server CPU and Redis commands are summed over the {} masters (INFO on each), so they include "
      "the idle masters' cluster-bus upkeep and warden's slot-table reads (CLUSTER SLOTS, every 5 s and counted "
      "under \"all\").",
      masters));
}

int run(const options& opts) {
  install_server_cleanup_handlers();

  // Opened first, so a bad path fails before minutes of measuring.
  std::unique_ptr<std::FILE, file_closer> records;
  if (opts.records_path) {
    records.reset(std::fopen(opts.records_path->c_str(), "w"));
    if (!records) throw std::runtime_error(fmt::format("--records: cannot open '{}'", *opts.records_path));
    std::setvbuf(records.get(), nullptr, _IOFBF, 1 << 20);
    write_records_header(records.get());
  }

  report_input report;
  report.duration_s = opts.duration_s;
  report.cpus = std::thread::hardware_concurrency();
  report.load_at_start = load_average();

  bench_target target = open_target(opts);
  warden::Config config = target.client;
  report.server = target.description;
  report.cluster = target.is_cluster();

  // Unique per run, so a shared server's leftovers (or another bench running
  // against it) cannot hold our locks.
  const std::string key_prefix = fmt::format("warden-bench:{}.{:x}:", ::getpid(), now_ns() & 0xffffff);

  // The bound first, on an idle server. On a cluster the 1-connection bound
  // runs on home with a key home serves, like S1; the 8-connection one in
  // redis-benchmark's cluster mode over every master, like S3.
  const std::string bound_key = target.place(key_prefix + "bound", 0);
  try {
    std::string sha;
    for (const auto& server : target.servers) sha = load_bound_script(server);
    fmt::print(stderr, "measuring the bound: redis-benchmark -c 1...\n");
    report.bound_single = measure_bound(target.home, sha, bound_key, 1, opts.duration_s);
    report.bound_single.where = target.home_address;
    fmt::print(stderr, "measuring the bound: redis-benchmark{} -c {}...\n", target.is_cluster() ? " --cluster" : "",
               contended_threads);
    if (target.is_cluster()) {
      // redis-benchmark puts a tag of each connection's master in place of
      // "{tag}". Those keys are left to expire: the script's PEXPIRE gives
      // them 30 s.
      report.bound_eight = measure_bound(target.home, sha, key_prefix + "bound:{tag}", contended_threads,
                                         opts.duration_s, /*cluster=*/true);
      report.bound_eight.where = fmt::format("{} masters (redis-benchmark --cluster)", target.servers.size());
    } else {
      report.bound_eight = measure_bound(target.home, sha, bound_key, contended_threads, opts.duration_s);
      report.bound_eight.where = target.home_address;
    }
    redis_sync::connect(target.home, std::chrono::seconds(5)).command({"DEL", bound_key});
  } catch (const std::exception& e) {
    report.bound_single.error = report.bound_eight.error = fmt::format("SCRIPT LOAD failed: {}", e.what());
  }
  report.bound_single.connections = 1;
  report.bound_eight.connections = contended_threads;
  for (const bound_result* b : {&report.bound_single, &report.bound_eight}) {
    if (!b->ok) report.notes.push_back(fmt::format("bound -c {}: {}", b->connections, b->error));
  }

  // The plain-hiredis loop next, before warden's Client exists: no warden
  // thread can then run (or spin) while the loop's CPU is counted.
  auto probe = std::make_shared<server_cpu_probe>(target.servers);
  auto server_cpu = [probe] { return (*probe)(); };
  report.pace_ms = static_cast<double>(pace.count());
  report.loop_where = target.home_address;
  const std::chrono::duration<double> duration(opts.duration_s);
  std::string loop_publish = "publish";
  try {
    loop_publish = target.publish_command();
    hiredis_loop loop(target.home, target.place(key_prefix + "loop:0", 0), loop_publish);
    report.loopback_rtt = loop.ping_round_trip(rtt_samples);
    fmt::print(stderr, "running the plain-hiredis loop for {:g} s...\n", opts.duration_s);
    report.loop = loop.run(duration, std::chrono::nanoseconds::zero(), server_cpu);
    if (selected(opts, "P1")) {
      fmt::print(stderr, "running the plain-hiredis loop paced ({} ms) for {:g} s...\n", pace.count(), opts.duration_s);
      report.loop_paced = loop.run(duration, pace, server_cpu);
    }
  } catch (const std::exception& e) {
    report.loop.error = fmt::format("could not set up: {}", e.what());
  }
  // S3's ceiling: as many loops as S3 has threads, side by side. On a
  // cluster S3 spreads over the masters while a loop would use one: no
  // like-for-like ceiling there.
  if (selected(opts, "S3") && !target.is_cluster()) {
    report.loop_threads_count = contended_threads;
    try {
      std::vector<std::unique_ptr<hiredis_loop>> loops;
      const std::string names = key_prefix + "loop-threads:";
      for (unsigned i = 0; i < contended_threads; ++i) {
        loops.push_back(
            std::make_unique<hiredis_loop>(target.home, target.place(fmt::format("{}{}", names, i), 0), loop_publish));
      }
      fmt::print(stderr, "running the plain-hiredis loop on {} threads side by side for {:g} s...\n", contended_threads,
                 opts.duration_s);
      report.loop_threads = run_side_by_side(loops, duration, server_cpu);
      // Its releases' unlock latches (about 150,000 in 5 s) would expire 15 s
      // later, inside a later window (the peer's S3, with 5 s windows), and
      // charge that window for them.
      try {
        drop_unlock_latches(target.home, names);
      } catch (const std::exception& e) {
        report.notes.push_back(
            fmt::format("plain-hiredis loop on {} threads: its unlock latches stay, to expire "
                        "in a later window: {}",
                        contended_threads, e.what()));
      }
    } catch (const std::exception& e) {
      report.loop_threads.ran = true;
      report.loop_threads.error = fmt::format("could not set up: {}", e.what());
    }
    if (!report.loop_threads.error.empty()) {
      report.notes.push_back(
          fmt::format("plain-hiredis loop on {} threads: {}", contended_threads, report.loop_threads.error));
    }
  }
  bool failed = false;
  for (const loop_result* l : {&report.loop, &report.loop_paced}) {
    if (!l->error.empty()) {
      report.notes.push_back(fmt::format("plain-hiredis loop{}: {}", l->paced ? " (paced)" : "", l->error));
      failed = true;
    }
    // The process CPU is what the comparison uses; the loop thread's own
    // should be all of it, as nothing else of the bench runs meanwhile.
    if (l->ran && l->ok && l->client_cpu_s > 0 && l->loop_thread_cpu_s >= 0 &&
        l->client_cpu_s - l->loop_thread_cpu_s > 0.05 * l->client_cpu_s) {
      report.notes.push_back(fmt::format(
          "plain-hiredis loop{}: the process used {:.3f} s of CPU but the loop thread only {:.3f} s: something else "
          "in the process ran during its window",
          l->paced ? " (paced)" : "", l->client_cpu_s, l->loop_thread_cpu_s));
    }
  }

  std::vector<scenario_spec> specs = plan(opts, report.notes);
  // On a cluster, lock i of every scenario goes on master i mod masters: the
  // one-lock scenarios on home, S3's 64 locks over all the masters.
  if (target.is_cluster()) {
    for (auto& spec : specs) {
      for (unsigned i = 0; i < spec.locks; ++i) {
        spec.lock_names.push_back(target.place(fmt::format("{}{}:{}", key_prefix, spec.name, i), i));
      }
    }
  }

  auto sink = std::make_shared<log_sink>();
  config.logger = [sink](warden::log_level level, std::string_view message) {
    if (level == warden::log_level::warning || level == warden::log_level::error) sink->add(level, message);
  };
  warden::Client client{config};

  run_settings settings;
  settings.key_prefix = key_prefix;
  settings.hang_grace_s = 60;
  settings.server_cpu_s = server_cpu;
  auto commands_probe = std::make_shared<server_commands_probe>(target.servers);
  settings.server_commands = [commands_probe] { return (*commands_probe)(); };
  settings.on_hang = [&records] {
    if (records) std::fflush(records.get());
    // Stuck warden threads cannot be joined and the Client cannot be
    // destroyed safely: stop the server and leave without destructors.
    kill_server_now();
    std::fflush(stdout);
    std::_Exit(3);
  };

  // Connects, loads warden's scripts and subscribes once, so that cost lands
  // in no scenario's figures; on a cluster, once on every master (one lock on
  // each, taken in turn).
  {
    run_settings warm = settings;
    warm.duration_s = 0.3;
    fmt::print(stderr, "warming up...\n");
    const auto servers = static_cast<unsigned>(target.servers.size());
    scenario_spec spec{"warm-up", "1 thread, a lock per server", 1,
                       servers,   bound_kind::single_connection, make_plain_lock};
    for (unsigned i = 0; target.is_cluster() && i < servers; ++i) {
      spec.lock_names.push_back(target.place(fmt::format("{}warm-up:{}", key_prefix, i), i));
    }
    const scenario_result w = run_scenario(client, spec, warm);
    if (w.acquisitions == 0) {
      fmt::print(stderr, "warden-bench: warm-up could not take a single lock: {}\n", w.first_error);
      return 1;
    }
  }

  settings.duration_s = opts.duration_s;
  settings.records = records.get();
  for (const auto& spec : specs) {
    fmt::print(stderr, "running {} ({}) for {:g} s...\n", spec.name, spec.description, opts.duration_s);
    report.results.push_back(run_scenario(client, spec, settings));
  }
  // --peer: the same S1/S2/S3 with redis-semaphore's Mutex, on the same
  // server, read by the same probes.
  peer_outcome peer;
  if (opts.peer_dir) {
    if (target.is_cluster()) {
      peer.skipped = "the peer run is for one server (redis-semaphore's Mutex is not cluster-aware here)";
    } else {
      peer_settings ps{*opts.peer_dir, target.home, opts.duration_s, key_prefix, server_cpu, settings.server_commands};
      std::vector<peer_scenario> wanted;
      for (const auto& spec : specs) {
        if (spec.name == "S1" || spec.name == "S2" || spec.name == "S3") {
          wanted.push_back({spec.name, spec.threads, spec.locks});
        }
      }
      peer = run_peer(ps, wanted);
    }
    if (!peer.ran) fmt::print(stderr, "warden-bench: the peer run was skipped: {}\n", peer.skipped);
    for (const auto& r : peer.results) failed = failed || r.overlaps != 0;
  }
  // S1 and S3 again through coroutines on one io_context (<warden/asio.hpp>),
  // beside their blocking figures: pairs/s and client CPU per pair.
  for (const auto& blocking : report.results) {
    if (blocking.spec.name != "S1" && blocking.spec.name != "S3") continue;
    if (!coro_scenarios_built()) {
      report.notes.push_back(blocking.spec.name + " through coroutines: not built (standalone Asio was not found).");
      continue;
    }
    const bool s1 = blocking.spec.name == "S1";
    const std::string name = blocking.spec.name + "co";
    const unsigned coroutines = s1 ? 1 : contended_threads;
    std::vector<std::string> names;
    for (unsigned i = 0; i < blocking.spec.locks; ++i) {
      names.push_back(target.place(fmt::format("{}{}:{}", key_prefix, name, i), i));
    }
    const std::string description = fmt::format("{} coroutine{}, {} lock{}, one io_context on one thread", coroutines,
                                                coroutines == 1 ? "" : "s", names.size(), names.size() == 1 ? "" : "s");
    fmt::print(stderr, "running {} ({}) for {:g} s...\n", name, description, opts.duration_s);
    const coro_result c = run_coro_scenario(client, name, description, coroutines, names, opts.duration_s);
    auto cpu_per_pair_us = [](double cpu_s, std::uint64_t pairs) {
      return cpu_s >= 0 && pairs > 0 ? fmt::format("{:.1f} µs", cpu_s * 1e6 / static_cast<double>(pairs))
                                     : std::string("n/a");
    };
    report.notes.push_back(
        fmt::format("{} ({}): {:.0f} pairs/s, client CPU {} per pair; blocking {} ({}): {:.0f} pairs/s, {} per pair.{}",
                    name, description, c.pairs_per_s, cpu_per_pair_us(c.client_cpu_s, c.pairs_in_window),
                    blocking.spec.name, blocking.spec.description, blocking.pairs_per_s,
                    cpu_per_pair_us(blocking.client_cpu_s, blocking.pairs_in_window),
                    c.errors + c.overlaps == 0
                        ? std::string()
                        : fmt::format(" {} errors (first: {}), {} overlaps.", c.errors, c.first_error, c.overlaps)));
    failed = failed || c.errors + c.overlaps != 0;
  }

  // The semaphores beside the Lock's contended scenario (S2: the same 8
  // threads on one Client, one permit-less lock).
  const scenario_result* s2 = nullptr;
  for (const auto& r : report.results)
    if (r.spec.name == "S2") s2 = &r;
  for (const auto& r : report.results) {
    if (r.spec.permits == 0) continue;
    auto cpu_us = [](const scenario_result& x) {
      return x.client_cpu_s >= 0 && x.pairs_in_window > 0
                 ? fmt::format("{:.1f} µs", x.client_cpu_s * 1e6 / static_cast<double>(x.pairs_in_window))
                 : std::string("n/a");
    };
    report.notes.push_back(fmt::format(
        "{} ({}): {:.0f} pairs/s (acquire + release of one permit), client CPU {} per pair; {}. Its hand-off gap "
        "pairs each acquisition with the permit free the longest, timed from that release() call's start; its "
        "\"mutual-exclusion violations\" count entries that found all {} permits' holders inside.",
        r.spec.name, r.spec.description, r.pairs_per_s, cpu_us(r),
        s2 ? fmt::format("S2 ({}): {:.0f} pairs/s, {} per pair", s2->spec.description, s2->pairs_per_s, cpu_us(*s2))
           : std::string("S2 (the Lock's) not run"),
        r.spec.permits));
  }

  report.load_at_end = load_average();
  for (const auto& r : report.results) {
    if (!r.first_error.empty()) report.notes.push_back(fmt::format("{}: first error: {}", r.spec.name, r.first_error));
    failed = failed || r.violations() != 0 || r.lock_errors + r.unlock_errors != 0;
  }
  for (auto& line : sink->note()) report.notes.push_back(std::move(line));
  if (report.cpus < contended_threads + 1 + target.servers.size()) {
    report.notes.push_back(
        fmt::format("{} CPUs are shared by the {} worker threads, warden's I/O thread and {} (and by redis-benchmark "
                    "while the bound is measured), so the 8-thread figures include CPU contention on the client side.",
                    report.cpus, contended_threads,
                    target.is_cluster() ? fmt::format("the {} redis-servers of the cluster", target.servers.size())
                                        : std::string("redis-server")));
  }
  if (target.is_cluster()) cluster_notes(target, specs, loop_publish, report.notes);
  report.notes.push_back(
      "The critical section is empty (`lock(); unlock();`). The occupied-flag check catches overlaps inside it; "
      "the timestamp check catches any entry before the previous holder's unlock() began.");
  report.notes.push_back(
      "(b) is the takeover wait the S2 targets are judged on; (b′) leaves out hand-offs where the "
      "lock sat idle before the next owner asked, which matters for S3.");
  report.notes.push_back(
      "Commands per pair: INFO commandstats deltas over the window, divided by the pairs completed in it. A "
      "script's own commands (HINCRBY, PEXPIRE, PUBLISH, ...) count under their names, so \"all\" is everything "
      "the server executed; the bench's INFO sampling is left out.");
  report.notes.push_back(
      "The plain-hiredis loop sends what warden sends for a plain Lock taken without a lease: EVALSHA lock_acquire "
      "(KEYS lock, attempt cancel mark; ARGV watchdog lease, owner) and EVALSHA lock_release (KEYS lock, unlock "
      "channel, unlock latch; ARGV \"0\", lease, owner, latch TTL, publish command), with fresh 32-hex-digit ids "
      "per call, and "
      "checks every acquire answered nil and every release 1. It runs before warden's Client is created, so its "
      "client CPU (the process's) is the loop thread's alone.");
  if (selected(opts, "P1")) {
    report.notes.push_back(fmt::format(
        "P1 and the paced loop sleep until the next {} ms tick of the monotonic clock before each pair; their client "
        "CPU per pair is everything the process used in the window ÷ pairs, so work done between pairs (idle "
        "timers, polling, spinning) counts.",
        pace.count()));
  }
  if (records) {
    std::fflush(records.get());
    report.notes.push_back(fmt::format("records written to {}", *opts.records_path));
  }

  print_report(stdout, report);
  if (opts.peer_dir)
    print_peer_report(stdout, peer, report.results, report.loop_threads.ran ? &report.loop_threads : nullptr);
  return failed ? 1 : 0;
}

}  // namespace

}  // namespace warden_bench

int main(int argc, char** argv) {
  using namespace warden_bench;
  options opts;
  try {
    opts = parse_options(argc, argv);
  } catch (const usage_error& e) {
    fmt::print(stderr, "warden-bench: {}\n\n", e.what());
    print_usage(stderr);
    return 2;
  }
  if (opts.help) {
    print_usage(stdout);
    return 0;
  }
  try {
    if (opts.burst) return run_burst_mode(opts);
    if (opts.scale || opts.waiters) return run_scale_modes(opts);
    if (opts.replica) return run_replica_mode(opts);
    return run(opts);
  } catch (const std::exception& e) {
    fmt::print(stderr, "warden-bench: {}\n", e.what());
    return 2;
  }
}
