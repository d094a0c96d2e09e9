#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
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
    if (name != "S1" && name != "S2" && name != "S3" && name != "P1" && name != "SEM" && name != "PES") {
      throw usage_error(fmt::format("--scenarios: unknown scenario '{}' (known: S1, S2, S3, P1, SEM, PES)", name));
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

// A whole number in [min, max]; `what` names the option in the complaint.
long long parse_count(const std::string& text, const char* what, long long min, long long max) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno != 0 || v < min || v > max) {
    throw usage_error(fmt::format("{}: '{}' is not a whole number from {} to {}", what, text, min, max));
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
    } else if (arg == "--scale") {
      opts.scale = static_cast<std::size_t>(parse_count(value(), "--scale", 1, 10'000'000));
    } else if (arg == "--waiters") {
      opts.waiters = static_cast<std::size_t>(parse_count(value(), "--waiters", 1, 1'000'000));
    } else if (arg == "--batch") {
      opts.batch = static_cast<int>(parse_count(value(), "--batch", 1, 10'000));
    } else if (arg == "--in-flight") {
      opts.in_flight = static_cast<std::size_t>(parse_count(value(), "--in-flight", 1, 1'000'000));
    } else if (arg == "--periods") {
      opts.periods = static_cast<unsigned>(parse_count(value(), "--periods", 1, 1'000));
    } else if (arg == "--lease") {
      // Config::lock_watchdog_timeout's own range starts at 3 ms; below 30 ms
      // a renewal period would be shorter than the bench's readings.
      opts.lease_ms = parse_count(value(), "--lease", 30, 3'600'000);
    } else if (arg == "--burst") {
      opts.burst = static_cast<std::size_t>(parse_count(value(), "--burst", 1, 10'000'000));
    } else if (arg == "--burst-watch") {
      opts.burst_watch_s = static_cast<int>(parse_count(value(), "--burst-watch", 0, 3'600));
    } else if (arg == "--peer") {
      opts.peer_dir = value();
    } else if (arg == "--cluster") {
      no_value();
      opts.cluster = true;
    } else if (arg == "--fair") {
      no_value();
      opts.fair = true;
    } else if (arg == "--spin") {
      no_value();
      opts.spin = true;
    } else if (arg == "--replica") {
      no_value();
      opts.replica = true;
    } else if (arg == "--help" || arg == "-h") {
      no_value();
      opts.help = true;
    } else {
      throw usage_error(fmt::format("unknown option '{}'", arg));
    }
  }
  const bool scale_mode = opts.scale || opts.waiters;
  if (scale_mode && (opts.cluster || (opts.url && opts.url->find("+cluster") != std::string::npos))) {
    throw usage_error("--scale and --waiters run on one server only (no --cluster or cluster URL)");
  }
  if (scale_mode && (opts.records_path || opts.fair || opts.spin)) {
    throw usage_error("--records, --fair and --spin belong to the scenarios, not to --scale/--waiters");
  }
  if (opts.replica && (scale_mode || opts.cluster || opts.url)) {
    throw usage_error(
        "--replica starts a throw-away server and its replica itself: no --url, --cluster, --scale or --waiters");
  }
  if (opts.peer_dir && (scale_mode || opts.replica)) {
    throw usage_error("--peer belongs to the scenarios, not to --scale/--waiters or --replica");
  }
  if (opts.replica && (opts.records_path || opts.fair || opts.spin)) {
    throw usage_error("--records, --fair and --spin belong to the scenarios, not to --replica");
  }
  if (opts.burst && (scale_mode || opts.replica || opts.cluster || opts.records_path || opts.fair || opts.spin ||
                     (opts.url && opts.url->find("+cluster") != std::string::npos))) {
    throw usage_error("--burst runs alone, on one server (with --url, --lease and --burst-watch only)");
  }
  if (opts.cluster && opts.url) {
    throw usage_error(
        "--cluster starts a throw-away cluster; for an existing one give --url redis+cluster://... alone");
  }
  return opts;
}

void print_usage(std::FILE* out) {
  std::fputs(
      R"(usage: warden-bench [options]

Measures warden::Lock against two yardsticks on the same Redis server, in the
same run, and prints a markdown report with the targets, each marked
✓ PASS or ✗ MISS:
  - the bound: redis-benchmark running EVALSHA of an HINCRBY + PEXPIRE script
    over 1 and over 8 connections;
  - the plain-hiredis loop: one thread on one blocking hiredis connection
    sending warden's own lock_acquire and lock_release scripts (EVALSHA, the
    keys and arguments warden sends for a plain Lock, loaded with SCRIPT LOAD
    first), checking every acquire answers nil and every release 1. It runs
    before warden's Client is created, back to back for --duration and, when
    P1 is selected, paced like P1 for --duration. When S3 is selected (one
    server, not a cluster), it also runs on 8 threads side by side, each on
    a connection and a lock of its own: S3's ceiling, what 8 blocking
    threads get from this machine with no library and no contention, set
    beside S3 and beside the peer's S3 (no target).
The report header also gives the loopback round trip: the median (and p99)
of 1,000 PINGs on the loop's blocking connection.

Scenarios (all threads share one warden::Client):
  S1  one thread, one lock:   lock(); unlock(); in a loop
  S2  eight threads, one lock
  S3  eight threads, 64 locks: worker i takes lock (i + k) % 64 on its k-th pair
  P1  paced: one thread, one lock, one lock(); unlock(); pair per 10 ms tick
      (it sleeps until the next tick of the monotonic clock; a pair that runs
      past a tick skips it rather than catching up)

For each scenario: pairs/s, pair latency, acquisition wait, hand-off gap,
owner changes, CPU per pair of this process (all its threads, warden's
I/O thread included) and of redis-server (INFO cpu), and the commands the
server ran per pair (INFO commandstats: script calls, SUBSCRIBE/UNSUBSCRIBE,
PUBLISH, and all commands including those run inside scripts) over the
window.

Targets:
  S1 pairs/s ≥ 0.85 × loop pairs/s;  S1 client CPU/pair ≤ 1.5 × loop's
  P1 client CPU/pair ≤ 2 × the paced loop's
  S3 pairs/s ≥ 1.5 × loop pairs/s;   S3 client CPU/pair ≤ 1.0 × loop's
  S2 owner changes ≥ 95 %;  S2 takeover wait (hand-off gap) p50 ≤ 1 ms,
     p99 ≤ 10 ms
  S1 pairs/s ≥ 0.9 × (1-connection bound ÷ 2);  S3 pairs/s ≥ 30,000
  S2F (with --fair) owner changes ≥ 95 %, min ÷ max ≥ 0.9, takeover p50 ≤ 1 ms
  no mutual-exclusion violations

Options:
  --url redis://[[user]:password@]host[:port][/db]
                      use this server. Default: start a throw-away redis-server
                      on a free loopback port (--save "" --appendonly no) and
                      stop it (by pid) at exit
  --url redis+cluster://[[user]:password@]host1:port1,host2:port2[,...][/]
                      use this Redis Cluster (see Cluster below)
  --cluster           start a throw-away Redis Cluster of 3 masters (no
                      replicas) on free loopback ports instead of one server,
                      slots split evenly, and stop its nodes (by pid) at exit
  --duration SECONDS  length of each scenario, of each plain-hiredis loop run
                      and of each redis-benchmark run (default 5)
  --scenarios LIST    comma-separated subset of S1,S2,S3,P1,SEM,PES (default
                      S1,S2,S3,P1); without P1 the paced loop is not run
                      either. SEM: 8 threads acquire and release one permit
                      of a Semaphore of 4; PES: the same on a
                      PermitExpirableSemaphore, permits kept by the watchdog
  --records FILE      write one CSV line per acquisition:
                        t_acq_start_ns,t_enter_ns,t_exit_ns,t_rel_done_ns,lock,worker
                      steady_clock nanoseconds; lock is "<scenario>:<index>",
                      worker the thread's index within its scenario
  --fair              also run S2 on a FairLock (S2F), once warden has one;
                      until then accepted and ignored with a note
  --spin              also run S2 on a SpinLock (S2S: waiters poll with the
                      default back-off, nothing is published), and compare
                      its takeover wait and commands per acquisition with
                      S2's pub/sub Lock
  --peer DIR          also run S1, S2 and S3 (those selected) with another
                      library on the same server, after warden's: Node's
                      redis-semaphore Mutex over ioredis, installed with
                      `npm install --prefix DIR redis-semaphore ioredis`
                      (bench/peer/redis_semaphore_peer.js; Debian's nodejs).
                      Reports its pairs/s, client and server CPU and
                      commands per pair beside warden's, and the targets
                      S3 pairs/s ≥ the peer's and S3 server CPU per pair
                      ≤ 1.1 × the peer's. Without node or the packages the
                      bench says so and skips it. One server only
  --help              this text

Cluster (--cluster or a redis+cluster:// URL): every scenario runs, all
threads sharing one cluster Client. Lock names are picked by slot: the lock of
S1, S2 and P1 lives on master 0 (the one serving slot 0), and S3's lock i on
master i mod the number of masters, so S3 works all of them. The
plain-hiredis loop and the 1-connection bound run on master 0 alone, with a
lock (a key) it serves, so S1 is compared with one node doing the same work;
the loop's release sends the publish command warden uses there (SPUBLISH with
shard channels). The 8-connection bound is redis-benchmark --cluster, its
connections spread over the masters, a key on each. Server CPU and commands
per pair are summed over the masters.

Replica mode (issue 28; instead of the scenarios):
  --replica           start a throw-away redis-server and one replica of it
                      (--replicaof, on a free loopback port; the bench waits
                      for master_link_status:up and a WAIT 1 that counts it,
                      and stops it by pid at exit). Then, in this order, each
                      for --duration: the plain-hiredis loop back to back;
                      the same loop with WAIT 1 <timeout> after each EVALSHA
                      (what warden sends after each lock write with replica
                      acknowledgement on; <timeout> is
                      ReplicaSyncConfig::timeout, 1000 ms); S1 on a Client
                      with replica_sync off; S1 on a Client with
                      replica_sync at_least_one (each Client made, warmed up
                      and destroyed in turn). Reports pairs/s, pair latency,
                      client and server CPU per pair, commands per pair
                      (WAIT included) for each, warden's figures ÷ the
                      loop's of the same kind, and the cost of WAIT per
                      pair: the time per pair (1 ÷ pairs/s) and the client
                      CPU per pair with WAIT less without, for the loop and
                      for warden.

Scale modes (issue 14; either or both instead of the scenarios, on one
server, --url or a throw-away one):
  --scale H           one Client (lease --lease, default 3 s: a renewal
                      period of 1 s) holds H locks and reports:
                      (a) baseline: a probe thread takes and releases another
                          lock (lock(); unlock_checked();) once per 2 ms tick
                          for 3 s: pair latency p50/p99/p99.9/max, and the
                          process CPU it costs;
                      (b) acquire: H distinct names, lock_async with a
                          completion, at most 1,000 outstanding (--in-flight), one owner
                          (new_owner_id()) for all: time and rate;
                      (c) hold for --periods renewal periods with the probe
                          running. Windows of one period are cut in the
                          longest quiet stretch of the renewals seen in one
                          period before them. Per window: script calls (INFO
                          commandstats eval+evalsha) less the probe's (its
                          pairs × its scripts per pair in the baseline),
                          the watchdog's batches from Observer::on_renewal
                          (sent, holds renewed/gone, failed, latency) and
                          how they spread (first to last sent, largest gap,
                          most sent within 10 ms). Over the windows: probe
                          latency and the added latency (hold max / p99 −
                          baseline p50), client CPU (getrusage, all threads)
                          less the baseline's and the PTTL sampler thread's
                          (a cross-check),
                          server CPU (INFO cpu), the smallest PTTL of 200 held
                          keys read every 100 ms on a plain connection, and
                          holds lost (Observer::on_hold_lost); then two
                          quiet periods, nothing but the watchdog at work:
                          client CPU (getrusage) over them is the renewal
                          CPU the target judges, also per renewed hold;
                      (d) memory: heap in use (glibc mallinfo2 uordblks +
                          hblkhd) and RSS before the handles, with H held
                          (per lock: the handle, the hold and the watchdog's
                          entry), and after releasing and dropping every
                          handle, waiting 2 s and taking another lock 300
                          times (leftover per name).
  --periods N         renewal periods held in (c) (default 5)
  --in-flight N       --scale: lock_async / unlock_async calls outstanding at
                      most in (b) and in the release (default 1,000)
  --batch N           --scale: Config::lock_watchdog_batch_size, holds per
                      renewal script (default the Config's, 100)
  --lease MS          Config::lock_watchdog_timeout of the Clients of these
                      modes (default 3000 for --scale, 30000 for --waiters)
  --waiters N         a holder Client takes N locks (watchdog mode, one
                      owner); the measured Client starts N waiters
                      (lock_async with a completion, each its own owner),
                      and the bench waits until they are parked: every
                      channel has a subscriber (INFO stats pubsub_channels)
                      and no waiter script ran for 500 ms (script calls less
                      the holder's renewal batches). Reports heap per parked
                      waiter, then the holder issues all N unlock_async back
                      to back: per waiter the time from that start to its
                      completion (p50/p99/max), how many got their lock,
                      errors, total time; then the waiters release, the
                      handles go, the holder Client is destroyed, and the
                      measured Client's heap is read. The whole cycle runs
                      again on N other names: what warden keeps per name is
                      the heap's growth from the end of the first cycle to
                      the end of the second, ÷ N (glibc's bounded caches,
                      which mallinfo2 counts as in use, fill in the first
                      and stay as full; the first end against the baseline
                      is shown as well). The server's floor for the wake:
                      the same N releases and N acquires (warden's
                      scripts) pipelined on one plain hiredis connection,
                      with a second one subscribed to every channel; read
                      5 times (2 before the cycles, 3 after, each on its
                      own names), and the wake p99 is judged against the
                      median of them (the fastest is shown too): one
                      reading varies with what else the machine runs.
                      Also shown: the server's calls by command over the
                      wake (INFO commandstats), and how long the served
                      waiters' channels take to have no subscriber left.
  --burst N           one Client issues N lock_async calls at once (a
                      completion each, its own owner, free locks, lease
                      --lease, default 30000 ms) and waits for every answer:
                      successes, failures (timed out or other) and when they
                      came, acquire scripts that reached the server (INFO
                      commandstats), client and server CPU; then the server's
                      scripts per 10 s for --burst-watch seconds (default 60),
                      where settling of lost attempts would show.
Targets of the scale modes: worst added latency ≤ 5 ms; client CPU for
renewals < 5 % of a core; renewal scripts per period = ⌈H / 100⌉ (±2 %);
≤ 1 KiB per held lock; ≤ 1 KiB per parked waiter; leftover ≤ 16 B per name
(--scale: after vs before; --waiters: growth from cycle 1 to cycle 2);
waiters wake p99 ≤ 50 ms with every waiter served, and ≤ 1.2 × the median
of the server's floor; 0 holds lost and no sampled
key missing.

Exit status: 0 finished (targets may still be MISS), 1 mutual-exclusion
violations, lock errors or a bad reply in the plain-hiredis loop (scale
modes: lock errors or lost holds), 2 bad usage or setup failure, 3 a
scenario hung.
)",
      out);
}

}  // namespace warden_bench
