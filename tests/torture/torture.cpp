// warden-torture: the multi-process exclusion check.
//
//   warden-torture [--cluster | --cluster-kill | --sentinel] KIND [SECONDS]
//
// KIND: lock, fair, fenced, spin, rwlock, redlock, or control (the negative control: the
// workers skip the lock, and the run passes only if the checker sees them
// overlap). SECONDS defaults to $WARDEN_TORTURE_SECONDS, else 12. The run's
// name is KIND, or cluster-KIND / cluster-kill-KIND / sentinel-KIND; when
// $WARDEN_TORTURE_KINDS is set (comma-separated) and does not list that name,
// the run is skipped (exit code 77).
//
// --cluster (lock, fair, fenced, spin, rwlock): the workers talk to a Redis
// Cluster of 3 masters with a replica each, one contended lock on each
// master, and the faults are the cluster's own: a graceful failover
// (CLUSTER FAILOVER), a held lock's slot moved to another master (ASK, then
// MOVED), CLIENT KILL of warden's connections on a master, a master stopped
// (SIGSTOP) for less than the cluster's node timeout, CLIENT PAUSE; plus the
// client-side ones below. SECONDS is then at least 24 unless given.
// --cluster-kill adds kill -9 of a master (its replica takes over, and the
// node is started again to rejoin as a replica). Replication is
// asynchronous, so such a kill can lose a hold that the old master
// acknowledged (DESIGN §7): overlaps that such a kill explains are counted
// and shown apart, and do not fail the run.
//
// --sentinel (lock, fair, fenced, spin, rwlock): the workers reach a master
// with one replica through three Redis Sentinels (a redis+sentinel:// URL;
// quorum 2, down-after 1 s), two contended locks on it, and the faults are
// the group's: SENTINEL FAILOVER; kill -9 of the master (the sentinels
// promote the replica; the node is started again as an empty master, which
// the sentinels turn into a replica of the new one); SIGSTOP of the replica
// for 300-800 ms; CLIENT KILL of warden's connections and CLIENT PAUSE on the
// master; plus the client-side ones below. A fault that fails over first
// waits until the group is healthy again. SECONDS is at least 24 unless
// given. Here an overlap after a kill is NOT excused: warden waits for the
// replica's acknowledgement of every lock write on a Sentinel master
// (Config::replica_sync), which exists to prevent exactly those. Overlaps
// that follow a kill (or a failover) are shown apart, so that a failure
// says what caused it, and fail the run. The figures add the time from each
// kill -9 until the first section entered afterwards.
//
// Several worker processes (warden-torture-worker) × threads contend for a few
// locks while this controller injects faults one after another: server
// SIGKILL + restart on the same port and directory with AOF (appendfsync
// always), CLIENT KILL of the workers' connections, CLIENT PAUSE, DEBUG
// SLEEP, SIGSTOP of a process holding a lock for longer than the lease, and
// SIGKILL of a worker (replaced by a new one). For redlock there are three
// servers without persistence, and the restart fault kills one and starts it
// again empty after more than a lease. The last seconds are calm, so the
// locks can drain.
//
// It fails when two sections of one lock overlap while both holders were
// still valid at exit (by valid_until()), writers counted against everyone
// and readers only against writers; when a blocking call outlasts its bound
// (its wait plus command_timeout plus a scheduling slack, time the process
// was stopped not counted); when keys are left in Redis after the workers
// stopped and the leases passed; when a counter incremented under the lock
// lost an update; or when a worker dies of something other than our SIGKILL.
// For fenced, it also fails when two sections drew the same token, or when a
// section that was valid at its exit ended before another valid one entered
// but holds the higher token: tokens must grow with every new holder.
// Liveness, away from faults: a lock let go while somebody wanted it must be
// held again within 500 ms (--handoff-ms, $WARDEN_TORTURE_HANDOFF_MS; more
// with a larger $WARDEN_TORTURE_SLACK_MS), and no call may run past its wait
// by more. Single-server runs add a pair of threads sharing one Client on a
// lock of their own (see spawn_pair). --late-wakeup MS is the negative
// control: one worker's waiters take each lock MS late, which must fail the
// run (it injects no faults).
// Records and a fault timeline stay in torture-runs/ when it fails.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"
#include "torture_record.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::torture::monotonic_ns;
using warden::test::ChildProcess;
using warden::test::ProbeReply;
using warden::test::RedisCluster;
using warden::test::RedisProbe;
using warden::test::RedisSentinelGroup;
using warden::test::RedisServer;
namespace fs = std::filesystem;

// Short leases and time-outs, so that every fault matters within seconds.
constexpr milliseconds watchdog{1500};
constexpr milliseconds command_timeout{500};
constexpr milliseconds fair_wait{2000};
constexpr int worker_count = 3;
constexpr int thread_count = 3;  // threads per worker, sharing its Client(s)
// No faults for this long at the start, and this long between two rounds of
// faults: stretches where the liveness check judges hand-offs.
constexpr milliseconds calm_start{2000};
// The pair (single-server runs): one more worker, whose 2 threads share a
// Client and hand a lock of their own back and forth, with nobody else on
// that Client. Its I/O thread goes idle between hand-offs, so a holder's
// unlock() runs the event loop itself while the other thread starts to wait:
// the shape of the hand-off that once stalled until some timer fired. Its
// timers are far apart (longer lease, command timeout and health check than
// the others'), so such a stall would last well past the liveness bound.
// The controller neither stops nor kills it: server faults alone reach it.
// It stops pair_stops_early before the others, so that the unlock latches it
// leaves (command_timeout x (retry_attempts + 2) = 7.5 s) expire about when
// theirs do.
constexpr int pair_threads = 2;
constexpr milliseconds pair_watchdog{6000};
constexpr milliseconds pair_command_timeout{1500};
constexpr milliseconds pair_health_check{5000};
constexpr milliseconds pair_latch{pair_command_timeout * 5};
constexpr milliseconds pair_stops_early{5000};
// Between two holds each pair thread pauses up to this long, as an
// application does other work: then neither thread is waiting when the other
// lets go, which is when the loop is idle.
constexpr milliseconds pair_pause{20};
constexpr milliseconds calm_between_rounds{4000};

std::int64_t ms_of(std::int64_t ns) { return ns / 1'000'000; }

long env_long(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atol(value) : fallback;
}

// Where the locks live, and so which faults there are.
enum class topology {
  single,        // one server (three for redlock)
  cluster,       // a Redis Cluster
  cluster_kill,  // a Redis Cluster whose masters may also be killed
  sentinel,      // a master and a replica watched by three sentinels
};

// "", "cluster-", "cluster-kill-" or "sentinel-": the run's name is this plus KIND.
std::string name_prefix(topology where) {
  switch (where) {
    case topology::single: return "";
    case topology::cluster: return "cluster-";
    case topology::cluster_kill: return "cluster-kill-";
    case topology::sentinel: return "sentinel-";
  }
  return "";
}

struct fault {
  std::int64_t start = 0, end = 0;
  std::string kind, detail;
  std::vector<int> locks;  // master_kill: the locks whose slots the killed master served
};

// Who is master now and which node replicates which, as each running node
// says of itself (ROLE): another node's view may lag behind a failover.
struct cluster_roles {
  std::vector<int> masters;           // node indexes
  std::map<int, int> replica_of;      // replica → its master
};

// A master picked by `pick` and a running replica of it, for a fault that
// fails it over; throws naming `fault` when that master has no replica.
template <class Pick, class Running>
std::pair<int, int> master_with_replica(const cluster_roles& now, Pick&& pick, Running&& running,
                                        const std::string& fault) {
  int master = now.masters.at(pick(now.masters.size()));
  int replica = -1;
  for (auto [node, of] : now.replica_of)
    if (of == master && running(node)) replica = node;
  if (replica < 0) throw std::runtime_error(fault + ": node " + std::to_string(master) + " has no replica");
  return {master, replica};
}

struct section {
  int lock = 0;
  char mode = 'x';
  std::int64_t enter = 0, exit = 0, valid_until = 0;
  bool wrote = false, write_valid = false;
  long pid = 0;
  int thread = 0;
  std::int64_t token = 0;  // fenced: the hold's token
  bool valid() const { return exit < valid_until; }
};

struct call {
  std::string name, result;
  std::int64_t start = 0, end = 0;
  long wait_ms = 0;
  long pid = 0;
  int thread = 0;
  int lock = -1;  // -1: a record written before calls named their lock
  char mode = 'x';
};

// One hold as the calls tell it: from the acquire's return (the caller was
// given the lock) to the start of its unlock() (the holder let go).
struct hold {
  int lock = 0;
  char mode = 'x';
  long pid = 0;
  int thread = 0;
  std::int64_t granted = 0;
  std::int64_t released = INT64_MAX;  // INT64_MAX: no unlock recorded (the worker was killed)
  std::string unlock_result;
};

// A blocking acquire that waited (try_lock_for with a wait > 0).
struct waiter {
  std::int64_t start = 0, end = 0, deadline = 0;
  long pid = 0;
  int thread = 0;
};

class controller {
 public:
  controller(std::string kind, topology where, long seconds, std::string worker_path)
      : kind_(std::move(kind)), seconds_(seconds), worker_path_(std::move(worker_path)),
        random_(static_cast<unsigned>(monotonic_ns())),
        in_cluster_(where == topology::cluster || where == topology::cluster_kill),
        in_sentinel_(where == topology::sentinel),
        kill_masters_(where == topology::cluster_kill || where == topology::sentinel),
        excuse_kills_(where == topology::cluster_kill) {
    name_ = name_prefix(where) + kind_;
  }

  int run();
  // The liveness bound (before the sanitizers' extra slack), and the negative
  // control: worker slot 0's threads take each lock a wait gave them this
  // much later (0: off); that run injects no faults, so every hand-off is
  // judged.
  void set_liveness(long handoff_ms, long late_wakeup_ms) {
    handoff_ms_ = handoff_ms;
    late_wakeup_ms_ = late_wakeup_ms;
    if (late_wakeup_ms_ > 0) name_ = "late-wakeup-" + name_;
  }

 private:
  void start_servers();
  void start_cluster();
  std::string worker_urls() const;
  std::string joined_lock_names(bool shared_only) const;
  void spawn_pair();
  std::int64_t command_timeout_of(long pid) const;
  void spawn_worker(int slot);
  void inject_faults(std::int64_t until);
  cluster_roles roles();
  int owner_of(int slot);
  int random_master();
  std::vector<int> locks_on(int node);
  std::string node_text(int node);
  void fault_failover();
  void fault_slot_move();
  void fault_warden_client_kill();
  void fault_master_pause();
  void fault_master_kill();
  bool after_master_kill(int lock, std::int64_t from, std::int64_t to) const;
  const fault* last_failover(int lock, std::int64_t from, std::int64_t to) const;
  void start_sentinel();
  int sentinel_master();
  bool sentinel_settled();
  void fault_sentinel_failover();
  void fault_sentinel_kill();
  void fault_replica_pause();
  std::string recovery_figures(const std::string& kind) const;
  void fault_server_restart();
  void fault_client_kill();
  void fault_client_pause();
  void fault_debug_sleep();
  void fault_stop_holder();
  void fault_kill_worker();
  void note(std::int64_t start, const std::string& kind, const std::string& detail);
  void wait_for_workers();
  long keys_left();
  void sweep_fair_queues();
  void read_records();
  int analyse();
  std::string check_liveness();
  std::int64_t settle_after(const fault& f) const;
  const fault* disturbed(std::int64_t from, std::int64_t to, bool pair) const;
  std::int64_t stopped_during(long pid, std::int64_t start, std::int64_t end) const;
  void print_faults_near(std::int64_t from, std::int64_t to) const;
  void print_calls_before(const section& s) const;
  std::string server_text(const RedisServer& server) const { return "port " + std::to_string(server.port()); }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }

  std::string kind_;
  long seconds_;
  std::string worker_path_;
  std::mt19937 random_;
  bool control_ = false;
  bool in_cluster_ = false;
  bool in_sentinel_ = false;
  bool kill_masters_ = false;            // masters are killed (cluster-kill, sentinel)
  bool excuse_kills_ = false;            // and overlaps a kill explains are allowed (cluster-kill)
  std::string name_;                     // KIND, cluster-KIND, cluster-kill-KIND or sentinel-KIND
  fs::path run_dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::unique_ptr<RedisCluster> cluster_;
  std::unique_ptr<RedisSentinelGroup> group_;
  std::int64_t faults_until_ = 0;        // when the calm tail begins
  std::vector<std::string> lock_names_;
  int pair_lock_ = -1;                   // the pair's own lock, the last of lock_names_ (-1: no pair)
  std::set<long> pair_pids_;
  std::vector<int> lock_slots_;          // cluster: each lock's slot
  std::atomic<int>* slots_ = nullptr;
  std::int64_t end_ns_ = 0;
  struct worker {
    std::unique_ptr<ChildProcess> process;
    bool killed_by_us = false;
  };
  std::vector<worker> workers_;          // every worker ever started
  std::vector<std::size_t> live_;        // index in workers_ per slot
  std::vector<fault> faults_;
  std::map<long, std::vector<std::pair<std::int64_t, std::int64_t>>> stops_;  // pid → stopped windows
  std::vector<section> sections_;
  std::vector<call> calls_;
  std::map<int, long> intents_;          // lock → "about to write" lines
  std::vector<std::string> failures_;
  std::map<long, std::int64_t> killed_at_;  // pid → when we killed it
  long late_wakeup_ms_ = 0;                 // the liveness check's negative control (worker slot 0)
  long handoff_ms_ = 500;                   // the liveness bound, before the sanitizers' extra slack
  long keys_left_ = 0;
  std::string sweep_note_;
  long unexpected_exits_ = 0;
};

void controller::start_servers() {
  if (in_cluster_) return start_cluster();
  if (in_sentinel_) return start_sentinel();
  lock_names_ = {"torture:0", "torture:1"};
  if (!control_) {
    pair_lock_ = static_cast<int>(lock_names_.size());
    lock_names_.push_back("torture:pair");
  }
  if (kind_ == "redlock") {
    for (int i = 0; i < 3; ++i) servers_.push_back(std::make_unique<RedisServer>());
  } else {
    servers_.push_back(std::make_unique<RedisServer>(
        std::vector<std::string>{"--appendonly", "yes", "--appendfsync", "always"}));
  }
}

// 3 masters with a replica each (the fixture's defaults: node timeout 2 s),
// and one contended lock on each master: the first name "torture:<n>" whose
// slot (as the cluster computes it) each master serves.
void controller::start_cluster() {
  cluster_ = std::make_unique<RedisCluster>();
  RedisProbe probe(cluster_->node(0));
  for (std::size_t m = 0; m < 3; ++m) {
    for (int n = 0;; ++n) {
      std::string name = "torture:" + std::to_string(n);
      if (std::find(lock_names_.begin(), lock_names_.end(), name) != lock_names_.end()) continue;
      ProbeReply slot = probe.command({"CLUSTER", "KEYSLOT", name});
      if (slot.is_error()) throw std::runtime_error("CLUSTER KEYSLOT: " + slot.str);
      if (cluster_->master_of_slot(static_cast<std::uint16_t>(slot.integer)) != static_cast<int>(m)) continue;
      lock_names_.push_back(name);
      lock_slots_.push_back(static_cast<int>(slot.integer));
      break;
    }
  }
}

std::string controller::worker_urls() const {
  if (in_cluster_) return cluster_->url();
  if (in_sentinel_) return group_->url();
  std::string urls;
  for (auto& server : servers_) urls += (urls.empty() ? "" : " ") + server->url();
  return urls;
}

// Every lock's name, or only those the (non-pair) workers share.
std::string controller::joined_lock_names(bool shared_only) const {
  std::string names;
  for (int i = 0; i < static_cast<int>(lock_names_.size()); ++i)
    if (!shared_only || i != pair_lock_) names += (names.empty() ? "" : ",") + lock_names_[i];
  return names;
}

void controller::spawn_pair() {
  std::vector<std::string> args{
      kind_,
      "locked",
      worker_urls(),
      run_dir_.string(),
      // Its slots (slot x threads + thread) lie past the workers', so that
      // the controller, which never stops the pair, does not mistake them.
      std::to_string(worker_count * thread_count),
      std::to_string(pair_threads),
      std::to_string(end_ns_ - std::min<std::int64_t>(pair_stops_early.count(), seconds_ * 1000 / 2) * 1'000'000),
      lock_names_[pair_lock_] + "@" + std::to_string(pair_lock_),
      std::to_string(pair_watchdog.count()),
      std::to_string(pair_command_timeout.count()),
      std::to_string(fair_wait.count()),
      std::to_string(random_()),
      "0",
      std::to_string(pair_health_check.count()),
      std::to_string(pair_pause.count()),
  };
  workers_.push_back({std::make_unique<ChildProcess>(worker_path_, args), false});
  pair_pids_.insert(workers_.back().process->pid());
}

std::int64_t controller::command_timeout_of(long pid) const {
  return (pair_pids_.count(pid) != 0 ? pair_command_timeout : command_timeout).count();
}

void controller::spawn_worker(int slot) {
  std::vector<std::string> args{
      kind_ == "control" ? "lock" : kind_,
      control_ ? "unlocked" : "locked",
      worker_urls(),
      run_dir_.string(),
      std::to_string(slot),
      std::to_string(thread_count),
      std::to_string(end_ns_),
      joined_lock_names(true),
      std::to_string(watchdog.count()),
      std::to_string(command_timeout.count()),
      std::to_string(fair_wait.count()),
      std::to_string(random_()),
  };
  if (late_wakeup_ms_ > 0 && slot == 0) args.push_back(std::to_string(late_wakeup_ms_));
  workers_.push_back({std::make_unique<ChildProcess>(worker_path_, args), false});
  live_[slot] = workers_.size() - 1;
}

void controller::note(std::int64_t start, const std::string& kind, const std::string& detail) {
  faults_.push_back({start, monotonic_ns(), kind, detail, {}});
  std::ofstream(run_dir_ / "faults.log", std::ios::app)
      << ms_of(start) << ".." << ms_of(faults_.back().end) << " " << kind << " " << detail << "\n";
}

void controller::fault_server_restart() {
  std::size_t index = pick(servers_.size());
  RedisServer& server = *servers_[index];
  std::int64_t start = monotonic_ns();
  server.kill();
  if (kind_ == "redlock") {
    // Empty on restart (no persistence), so it must stay away for longer
    // than a lease: until then its keys may be all that keeps a majority.
    std::this_thread::sleep_for(watchdog + 500ms);
    server.start();
    note(start, "server_restart_empty", "server " + std::to_string(index) + " port " + std::to_string(server.port()));
  } else {
    server.start();
    note(start, "server_restart_aof", "port " + std::to_string(server.port()));
  }
}

void controller::fault_client_kill() {
  std::size_t index = pick(servers_.size());
  RedisProbe probe(*servers_[index]);
  std::int64_t start = monotonic_ns();
  long killed = 0;
  for (const char* type : {"normal", "pubsub"}) {
    ProbeReply reply = probe.command({"CLIENT", "KILL", "TYPE", type});
    if (!reply.is_error()) killed += reply.integer;
  }
  note(start, "client_kill", "server " + std::to_string(index) + ": " + std::to_string(killed) + " connections");
}

void controller::fault_client_pause() {
  std::size_t index = in_cluster_    ? static_cast<std::size_t>(random_master())
                      : in_sentinel_ ? static_cast<std::size_t>(sentinel_master())
                                     : pick(servers_.size());
  RedisServer& server = in_cluster_ ? cluster_->node(index) : in_sentinel_ ? group_->node(index) : *servers_[index];
  std::string text = in_cluster_ || in_sentinel_ ? node_text(static_cast<int>(index)) : "server " + std::to_string(index);
  // Under the sentinels' down-after (1 s): their pings wait too, and a
  // longer pause would be a failover.
  long pause_ms = std::uniform_int_distribution<long>(200, in_sentinel_ ? 800 : 1500)(random_);
  RedisProbe probe(server);
  std::int64_t start = monotonic_ns();
  probe.command({"CLIENT", "PAUSE", std::to_string(pause_ms), "ALL"});
  std::this_thread::sleep_for(milliseconds{pause_ms});
  note(start, "client_pause", text + " " + std::to_string(pause_ms) + " ms");
}

void controller::fault_debug_sleep() {
  std::size_t index = pick(servers_.size());
  long sleep_ms = std::uniform_int_distribution<long>(200, 1200)(random_);
  RedisProbe probe(*servers_[index]);
  std::int64_t start = monotonic_ns();
  std::ostringstream seconds;
  seconds << std::fixed << std::setprecision(3) << sleep_ms / 1000.0;
  probe.command({"DEBUG", "SLEEP", seconds.str()});
  note(start, "debug_sleep", "server " + std::to_string(index) + " " + std::to_string(sleep_ms) + " ms");
}

void controller::fault_stop_holder() {
  // Prefer a process that is inside a critical section right now.
  std::int64_t give_up = monotonic_ns() + 1'000'000'000;
  int chosen = -1;
  while (chosen < 0 && monotonic_ns() < give_up) {
    int slot = static_cast<int>(pick(worker_count));
    for (int t = 0; t < thread_count; ++t)
      if (slots_[slot * thread_count + t].load() == 1) chosen = slot;
    if (chosen < 0) std::this_thread::sleep_for(1ms);
  }
  bool holder = chosen >= 0;
  if (!holder) chosen = static_cast<int>(pick(worker_count));
  ChildProcess& process = *workers_[live_[chosen]].process;
  std::int64_t start = monotonic_ns();
  process.kill(SIGSTOP);
  bool still_holding = false;
  for (int t = 0; t < thread_count; ++t) still_holding |= slots_[chosen * thread_count + t].load() == 1;
  std::this_thread::sleep_for(watchdog + 600ms);
  process.kill(SIGCONT);
  stops_[process.pid()].push_back({start, monotonic_ns()});
  note(start, still_holding ? "sigstop_holder" : "sigstop_idle",
       "pid " + std::to_string(process.pid()) + " for " + std::to_string((watchdog + 600ms).count()) + " ms");
}

void controller::fault_kill_worker() {
  int slot = static_cast<int>(pick(worker_count));
  worker& victim = workers_[live_[slot]];
  std::int64_t start = monotonic_ns();
  victim.killed_by_us = true;
  victim.process->kill(SIGKILL);
  victim.process->wait();
  long old_pid = victim.process->pid();
  killed_at_[old_pid] = start;
  spawn_worker(slot);
  note(start, "kill_worker", "pid " + std::to_string(old_pid) + " replaced by " +
                                 std::to_string(workers_.back().process->pid()));
}

// ---- cluster faults

cluster_roles controller::roles() {
  cluster_roles roles;
  for (std::size_t i = 0; i < cluster_->size(); ++i) {
    if (!cluster_->node(i).running()) continue;
    RedisProbe probe(cluster_->node(i));
    ProbeReply role = probe.command({"ROLE"});
    if (role.is_error() || role.elements.empty()) continue;
    if (role.elements[0].str == "master") roles.masters.push_back(static_cast<int>(i));
    if (role.elements[0].str != "slave" || role.elements.size() < 3) continue;
    for (std::size_t m = 0; m < cluster_->size(); ++m) {
      if (std::to_string(cluster_->node(m).port()) == role.elements[2].str ||
          cluster_->node(m).port() == role.elements[2].integer)
        roles.replica_of[static_cast<int>(i)] = static_cast<int>(m);
    }
  }
  return roles;
}

// The master that serves `slot` by its own word (CLUSTER NODES, its
// "myself" line), -1 if none does.
int controller::owner_of(int slot) {
  for (int master : roles().masters) {
    RedisProbe probe(cluster_->node(static_cast<std::size_t>(master)));
    std::istringstream lines(probe.command({"CLUSTER", "NODES"}).str);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string id, address, flags, field;
      fields >> id >> address >> flags;
      if (flags.find("myself") == std::string::npos) continue;
      for (int skip = 0; skip < 5; ++skip) fields >> field;  // master, ping, pong, epoch, link
      while (fields >> field) {
        if (field.empty() || field[0] == '[') continue;  // a slot migrating or importing
        auto dash = field.find('-');
        int first = std::atoi(field.c_str());
        int last = dash == std::string::npos ? first : std::atoi(field.c_str() + dash + 1);
        if (first <= slot && slot <= last) return master;
      }
    }
  }
  return -1;
}

int controller::random_master() {
  auto masters = roles().masters;
  if (masters.empty()) throw std::runtime_error("the cluster has no master");
  return masters[pick(masters.size())];
}

std::vector<int> controller::locks_on(int node) {
  std::vector<int> locks;
  for (std::size_t i = 0; i < lock_names_.size(); ++i)
    if (owner_of(lock_slots_[i]) == node) locks.push_back(static_cast<int>(i));
  return locks;
}

// "node 2 (port 1234, locks torture:0 torture:5)"; for a sentinel group
// "node 1 (port 1234)", since every lock is on its master.
std::string controller::node_text(int node) {
  if (in_sentinel_) return "node " + std::to_string(node) + " (port " + std::to_string(group_->node(node).port()) + ")";
  std::string text = "node " + std::to_string(node) + " (port " + std::to_string(cluster_->node(node).port());
  auto locks = locks_on(node);
  if (!locks.empty()) text += ", locks";
  for (int lock : locks) text += " " + lock_names_[lock];
  return text + ")";
}

// CLUSTER FAILOVER sent to a master's replica: the master stops taking
// writes until the replica has everything, then the replica takes over, so
// no acknowledged hold is lost.
void controller::fault_failover() {
  cluster_->wait_until_healthy(30s);
  auto [master, replica] = master_with_replica(
      roles(), [this](std::size_t n) { return pick(n); }, [this](int node) { return cluster_->node(node).running(); },
      "failover");
  std::string before = node_text(master);
  std::int64_t start = monotonic_ns();
  RedisProbe probe(cluster_->node(replica));
  ProbeReply reply = probe.command({"CLUSTER", "FAILOVER"});
  if (reply.is_error()) throw std::runtime_error("CLUSTER FAILOVER on node " + std::to_string(replica) + ": " + reply.str);
  // No event tells when the replica has taken over: ask it.
  const std::int64_t give_up = monotonic_ns() + 15'000'000'000;
  while (probe.command({"ROLE"}).elements.at(0).str != "master") {
    if (monotonic_ns() > give_up) {
      // The cluster gave the manual failover up (the replica did not catch
      // up in time: a slow, sanitized run): nothing changed hands, so the
      // run goes on without this fault.
      note(start, "failover_not_done", before + ": node " + std::to_string(replica) + " is no master after 15 s");
      return;
    }
    std::this_thread::sleep_for(20ms);
  }
  note(start, "failover", before + " replaced by its replica node " + std::to_string(replica));
}

// Moves a hot lock's slot to another master while (preferably) somebody
// holds it and others wait, the way resharding does: IMPORTING on the
// target, MIGRATING on the source, MIGRATE the slot's keys, then NODE on
// target and source. Meanwhile commands for the slot are answered ASK (or
// TRYAGAIN while its keys are split), afterwards MOVED.
void controller::fault_slot_move() {
  cluster_->wait_until_healthy(30s);
  int lock = static_cast<int>(pick(lock_names_.size()));
  const std::string& name = lock_names_[lock];
  const std::string slot = std::to_string(lock_slots_[lock]);
  int source = owner_of(lock_slots_[lock]);
  auto masters = roles().masters;
  masters.erase(std::remove(masters.begin(), masters.end(), source), masters.end());
  if (source < 0 || masters.empty()) throw std::runtime_error("slot move: no source or no other master for " + name);
  int target = masters[pick(masters.size())];
  RedisProbe from(cluster_->node(source));
  RedisProbe to(cluster_->node(target));
  // Held, if that happens within a second (it nearly always does).
  const std::int64_t held_by = monotonic_ns() + 1'000'000'000;
  bool held = false;
  while (!(held = from.exists(name)) && monotonic_ns() < held_by) std::this_thread::sleep_for(1ms);
  std::int64_t start = monotonic_ns();
  auto checked = [](RedisProbe& probe, const std::vector<std::string>& argv) {
    ProbeReply reply = probe.command(argv);
    if (reply.is_error()) throw std::runtime_error("slot move: " + argv.at(0) + " " + argv.at(1) + ": " + reply.str);
    return reply;
  };
  checked(to, {"CLUSTER", "SETSLOT", slot, "IMPORTING", cluster_->node_id(source)});
  checked(from, {"CLUSTER", "SETSLOT", slot, "MIGRATING", cluster_->node_id(target)});
  long moved = 0;
  for (int round = 0;; ++round) {
    ProbeReply keys = checked(from, {"CLUSTER", "GETKEYSINSLOT", slot, "100"});
    if (keys.elements.empty()) break;
    if (round == 100) throw std::runtime_error("slot move: slot " + slot + " still has keys after 100 rounds");
    // All of them in one MIGRATE, so a lock's keys are split between the
    // nodes only while that one command runs.
    std::vector<std::string> argv{"MIGRATE", cluster_->node(target).host(), std::to_string(cluster_->node(target).port()),
                                  "", "0", "5000", "REPLACE", "KEYS"};
    for (const auto& key : keys.elements) argv.push_back(key.str);
    checked(from, argv);
    moved += static_cast<long>(keys.elements.size());
  }
  checked(to, {"CLUSTER", "SETSLOT", slot, "NODE", cluster_->node_id(target)});
  checked(from, {"CLUSTER", "SETSLOT", slot, "NODE", cluster_->node_id(target)});
  note(start, "slot_move", name + " slot " + slot + " from node " + std::to_string(source) + " to node " +
                               std::to_string(target) + (held ? ", held" : ", not held") + ", " +
                               std::to_string(moved) + " keys");
}

// CLIENT KILL of every connection warden made to one master (warden names
// them warden:<client id>): commands in flight are lost, waiters lose their
// subscriptions.
void controller::fault_warden_client_kill() {
  int master = in_sentinel_ ? sentinel_master() : random_master();
  RedisProbe probe(in_sentinel_ ? group_->node(master) : cluster_->node(master));
  std::int64_t start = monotonic_ns();
  ProbeReply list = probe.command({"CLIENT", "LIST"});
  long killed = 0;
  std::istringstream lines(list.str);
  for (std::string line; std::getline(lines, line);) {
    std::string id;
    bool ours = false;
    std::istringstream fields(line);
    for (std::string field; fields >> field;) {
      if (field.rfind("id=", 0) == 0) id = field.substr(3);
      if (field.rfind("name=warden:", 0) == 0) ours = true;
    }
    if (!ours || id.empty()) continue;
    ProbeReply reply = probe.command({"CLIENT", "KILL", "ID", id});
    if (!reply.is_error()) killed += reply.integer;
  }
  note(start, "client_kill", node_text(master) + ": " + std::to_string(killed) + " warden connections");
}

// SIGSTOP of a master for less than the node timeout (2 s): it answers
// nothing, then everything at once, and no failover starts.
void controller::fault_master_pause() {
  int master = random_master();
  long pause_ms = std::uniform_int_distribution<long>(300, 1200)(random_);
  std::string text = node_text(master);
  std::int64_t start = monotonic_ns();
  cluster_->node(master).pause();
  std::this_thread::sleep_for(milliseconds{pause_ms});
  cluster_->node(master).resume();
  note(start, "master_pause", text + " " + std::to_string(pause_ms) + " ms");
}

// kill -9 of a master: its replica takes over once the others mark it
// failed (node timeout 2 s), with whatever replication had brought it.
// The node is started again afterwards and rejoins as a replica (its
// nodes.conf is kept across restarts).
void controller::fault_master_kill() {
  cluster_->wait_until_healthy(30s);
  auto [master, replica] = master_with_replica(
      roles(), [this](std::size_t n) { return pick(n); }, [this](int node) { return cluster_->node(node).running(); },
      "master kill");
  std::string text = node_text(master);
  auto locks = locks_on(master);
  std::int64_t start = monotonic_ns();
  cluster_->node(master).kill();
  RedisProbe probe(cluster_->node(replica));
  const std::int64_t give_up = monotonic_ns() + 30'000'000'000;
  while (probe.command({"ROLE"}).elements.at(0).str != "master") {
    if (monotonic_ns() > give_up) throw std::runtime_error("master kill: node " + std::to_string(replica) + " is no master after 30 s");
    std::this_thread::sleep_for(20ms);
  }
  std::int64_t promoted = monotonic_ns();
  cluster_->node(master).start();
  note(start, "master_kill", text + " killed; node " + std::to_string(replica) + " master after " +
                                 std::to_string(ms_of(promoted - start)) + " ms; restarted as a replica");
  faults_.back().locks = locks;
}

// Whether a kill -9 of the master serving `lock` started within [from, to].
bool controller::after_master_kill(int lock, std::int64_t from, std::int64_t to) const {
  for (const auto& f : faults_) {
    if (f.kind != "master_kill" || f.start < from || f.start > to) continue;
    if (std::find(f.locks.begin(), f.locks.end(), lock) != f.locks.end()) return true;
  }
  return false;
}

// The fault that failed over the master serving `lock` last within
// [from, to] (a kill -9 or, with sentinels, SENTINEL FAILOVER), if any.
const fault* controller::last_failover(int lock, std::int64_t from, std::int64_t to) const {
  const fault* found = nullptr;
  for (const auto& f : faults_) {
    if ((f.kind != "master_kill" && f.kind != "failover") || f.start < from || f.start > to) continue;
    if (std::find(f.locks.begin(), f.locks.end(), lock) != f.locks.end()) found = &f;
  }
  return found;
}

// ---- sentinel faults

// A master and one replica watched by three sentinels (the fixture's
// defaults: quorum 2, down-after 1 s, failover-timeout 5 s), both locks on
// the master. The data nodes keep nothing on disk.
void controller::start_sentinel() {
  group_ = std::make_unique<RedisSentinelGroup>();
  lock_names_ = {"torture:0", "torture:1"};
}

// The data node the sentinels name as master.
int controller::sentinel_master() {
  int master = group_->master_index();
  if (master < 0) throw std::runtime_error("no sentinel names a master");
  return master;
}

// Waits until the group is healthy again (a restarted node linked as a
// replica, every sentinel agreeing): a fault that fails the master over
// needs a replica to fail over to. False when the calm tail begins first;
// the fixture's error when it is not healthy within 30 s.
bool controller::sentinel_settled() {
  const std::int64_t left = faults_until_ - monotonic_ns();
  if (left <= 0) return false;
  try {
    group_->wait_until_healthy(std::min<milliseconds>(30s, milliseconds{left / 1'000'000}));
  } catch (const std::runtime_error&) {
    if (monotonic_ns() < faults_until_) throw;
    return false;
  }
  return true;
}

// SENTINEL FAILOVER: the sentinels promote the replica (REPLICAOF NO ONE)
// without asking the master to stop taking writes first, then reconfigure
// the old master as its replica. Done when the other node is master by
// every sentinel's word and its own.
void controller::fault_sentinel_failover() {
  if (!sentinel_settled()) return;
  const int master = sentinel_master();
  const int replica = 1 - master;
  const std::size_t sentinel = pick(group_->sentinels());
  const std::string command = "SENTINEL FAILOVER " + group_->master_name();
  std::string before = node_text(master);
  std::int64_t start = monotonic_ns();
  RedisProbe probe(group_->sentinel(sentinel));
  // A sentinel that has not refreshed its view of a replica since it was
  // (re)attached may not consider it yet (NOGOODSLAVE); nothing says when
  // it will, so ask again. A failover it accepted can still be aborted
  // (the replica not promoted within failover-timeout), and a forced one is
  // not retried by the sentinels: then ask again too.
  const std::int64_t give_up = start + 40'000'000'000;
  for (;;) {
    ProbeReply reply = probe.command({"SENTINEL", "FAILOVER", group_->master_name()});
    if (!reply.is_error()) {
      try {
        group_->wait_for_master(static_cast<std::size_t>(replica), 10s);
        break;
      } catch (const std::runtime_error& error) {
        if (monotonic_ns() <= give_up) continue;
        // The sentinels would not promote that replica (one they have not
        // judged good yet, soon after it re-attached): nothing to check
        // exclusion against, so the run goes on without this fault.
        note(start, "failover_not_done", command + ": " + error.what());
        return;
      }
    }
    bool transient = reply.str.rfind("NOGOODSLAVE", 0) == 0 || reply.str.rfind("INPROG", 0) == 0;
    if (!transient || monotonic_ns() > give_up)
      throw std::runtime_error(command + " to sentinel " + std::to_string(sentinel) + ": " + reply.str);
    std::this_thread::sleep_for(100ms);
  }
  note(start, "failover", command + " (sentinel " + std::to_string(sentinel) + "): " + before + " replaced by " +
                              node_text(replica) + " after " + std::to_string(ms_of(monotonic_ns() - start)) + " ms");
  for (int lock = 0; lock < static_cast<int>(lock_names_.size()); ++lock) faults_.back().locks.push_back(lock);
}

// kill -9 of the master: the sentinels mark it down after 1 s, agree, and
// promote the replica, with whatever replication had brought it. The node
// is then started again with nothing (no persistence, no --replicaof): a
// master with an empty data set until the sentinels turn it into a replica
// of the new master, several seconds later. The next fault that fails over
// waits for that.
void controller::fault_sentinel_kill() {
  if (!sentinel_settled()) return;
  const int master = sentinel_master();
  const int replica = 1 - master;
  std::string text = node_text(master);
  std::int64_t start = monotonic_ns();
  group_->node(master).kill();
  group_->wait_for_master(static_cast<std::size_t>(replica), 30s);
  std::int64_t promoted = monotonic_ns();
  group_->restart_as_master(static_cast<std::size_t>(master));
  note(start, "master_kill", text + " killed; " + node_text(replica) + " master after " +
                                 std::to_string(ms_of(promoted - start)) + " ms; restarted as an empty master");
  for (int lock = 0; lock < static_cast<int>(lock_names_.size()); ++lock) faults_.back().locks.push_back(lock);
}

// SIGSTOP of the replica for 300-800 ms, under the sentinels' down-after:
// it acknowledges nothing meanwhile, then everything at once.
void controller::fault_replica_pause() {
  if (!sentinel_settled()) return;
  const int replica = 1 - sentinel_master();
  long pause_ms = std::uniform_int_distribution<long>(300, 800)(random_);
  std::string text = node_text(replica);
  std::int64_t start = monotonic_ns();
  group_->node(replica).pause();
  std::this_thread::sleep_for(milliseconds{pause_ms});
  group_->node(replica).resume();
  note(start, "replica_pause", text + " " + std::to_string(pause_ms) + " ms");
}

// "min/median/max" of the time from each fault of `kind` until the first
// section (of any lock) entered after it began.
std::string controller::recovery_figures(const std::string& kind) const {
  std::vector<std::int64_t> enters;
  for (const auto& s : sections_) enters.push_back(s.enter);
  std::sort(enters.begin(), enters.end());
  std::vector<std::int64_t> took;
  long none = 0;
  for (const auto& f : faults_) {
    if (f.kind != kind) continue;
    auto next = std::upper_bound(enters.begin(), enters.end(), f.start);
    if (next == enters.end()) {
      ++none;
    } else {
      took.push_back(ms_of(*next - f.start));
    }
  }
  std::ostringstream out;
  if (took.empty()) {
    out << "none measured";
  } else {
    std::sort(took.begin(), took.end());
    out << took.front() << " / " << took[took.size() / 2] << " / " << took.back() << " ms (min / median / max of "
        << took.size() << ")";
  }
  if (none > 0) out << ", " << none << " with no section entered before the end";
  return out.str();
}

void controller::inject_faults(std::int64_t until) {
  faults_until_ = until;
  using fault_fn = void (controller::*)();
  std::vector<fault_fn> kinds{&controller::fault_server_restart, &controller::fault_client_kill,
                              &controller::fault_client_pause,   &controller::fault_debug_sleep,
                              &controller::fault_stop_holder,    &controller::fault_kill_worker};
  if (in_cluster_) {
    kinds = {&controller::fault_failover,     &controller::fault_slot_move,   &controller::fault_warden_client_kill,
             &controller::fault_master_pause, &controller::fault_client_pause, &controller::fault_stop_holder,
             &controller::fault_kill_worker};
    if (kill_masters_) kinds.push_back(&controller::fault_master_kill);
  }
  if (in_sentinel_) {
    kinds = {&controller::fault_sentinel_failover, &controller::fault_sentinel_kill,
             &controller::fault_replica_pause,     &controller::fault_warden_client_kill,
             &controller::fault_client_pause,      &controller::fault_stop_holder,
             &controller::fault_kill_worker};
  }
  // Every kind once in a shuffled round, then a new round: a short run still
  // sees each kind.
  std::vector<fault_fn> round;
  bool first_round = true;
  while (monotonic_ns() < until) {
    if (round.empty()) {
      // Between rounds a calm stretch, long enough for the last fault to
      // settle and for some hand-offs to be judged afterwards.
      if (!first_round) {
        std::this_thread::sleep_for(std::min<std::int64_t>(calm_between_rounds.count() * 1'000'000,
                                                           std::max<std::int64_t>(0, until - monotonic_ns())) *
                                    1ns);
        if (monotonic_ns() >= until) break;
      }
      first_round = false;
      round = kinds;
      std::shuffle(round.begin(), round.end(), random_);
    }
    fault_fn next = round.back();
    round.pop_back();
    try {
      (this->*next)();
    } catch (const std::exception& error) {
      failures_.push_back(std::string("fault injection failed: ") + error.what());
      return;
    }
    std::this_thread::sleep_for(milliseconds{std::uniform_int_distribution<long>(200, 500)(random_)});
  }
}

void controller::wait_for_workers() {
  for (auto& w : workers_) {
    if (w.killed_by_us) continue;
    int code = 0;
    auto left = std::max<std::int64_t>(0, end_ns_ - monotonic_ns()) / 1'000'000 + 15'000;
    if (!w.process->wait_for(milliseconds{left}, &code)) {
      w.process->kill(SIGKILL);
      code = w.process->wait();
      failures_.push_back("worker " + std::to_string(w.process->pid()) + " did not finish 15 s after its end");
    }
    if (code != 0) {
      ++unexpected_exits_;
      failures_.push_back("worker " + std::to_string(w.process->pid()) + " exited with code " +
                          std::to_string(code) + " (see worker-" + std::to_string(w.process->pid()) + ".log)");
    }
  }
}

// A gone fair waiter leaves the queue only when somebody's attempt finds its
// deadline passed, and a dead waiter queued behind other dead ones keeps its
// deadline when they are dropped (Redisson's rule, so that Redisson's
// waiters, which never refresh theirs, are not dropped alive): it may be due
// up to (dead waiters ahead + 1) × fair_wait after its last attempt. Once the
// workers have stopped nobody tries any more, so one more user of the locks
// does, as long as that bound allows, until it takes every lock in one round.
void controller::sweep_fair_queues() {
  // With one replica, a master killed late in the run leaves its successor
  // without a replica until the restarted node attaches, and replica
  // acknowledgement refuses every acquire meanwhile: the sweep starts once
  // the group is whole again.
  if (in_sentinel_) group_->wait_until_healthy(60s);
  long depth = 0;
  for (std::size_t i = 0; i < lock_names_.size(); ++i) {
    RedisServer* server = servers_.empty() ? nullptr : servers_[0].get();
    if (in_cluster_) {
      int master = owner_of(lock_slots_[i]);
      if (master >= 0) server = &cluster_->node(static_cast<std::size_t>(master));
    }
    if (in_sentinel_) {
      int master = group_->master_index();
      if (master >= 0) server = &group_->node(static_cast<std::size_t>(master));
    }
    if (server == nullptr) continue;
    RedisProbe probe(*server);
    ProbeReply length = probe.command({"LLEN", "redisson_lock_queue:{" + lock_names_[i] + "}"});
    if (!length.is_error()) depth = std::max(depth, static_cast<long>(length.integer));
  }
  const auto bound = (pair_lock_ >= 0 ? pair_latch : watchdog) + fair_wait * (depth + 1) + 2s;
  const std::int64_t start = monotonic_ns();
  std::vector<std::string> args{"fair", "sweep", worker_urls(), run_dir_.string(), "0", "1",
                                std::to_string(start + bound.count() * 1'000'000), joined_lock_names(false),
                                std::to_string(watchdog.count()), std::to_string(command_timeout.count()),
                                std::to_string(fair_wait.count()), "1"};
  ChildProcess sweeper(worker_path_, args);
  int code = 0;
  if (!sweeper.wait_for(bound + 15s, &code)) {
    sweeper.kill(SIGKILL);
    code = sweeper.wait();
  }
  std::ostringstream note;
  note << "  fair queues after the workers stopped: up to " << depth << " waiters left, swept in "
       << ms_of(monotonic_ns() - start) << " ms (bound " << bound.count() << " ms)"
       << (code == 0 ? "" : ", NOT emptied") << "\n";
  sweep_note_ = note.str();
  if (code != 0) failures_.push_back("the fair queues were not empty within " + std::to_string(bound.count()) + " ms");
}

long controller::keys_left() {
  if (kind_ == "fair") sweep_fair_queues();
  // Every hold expires a lease after its holder stopped; a fair waiter that
  // vanished is dropped by the next attempt after its deadline (the sweep
  // above made sure there was one). Anything still here after that is an
  // orphan.
  std::int64_t deadline =
      monotonic_ns() + ((pair_lock_ >= 0 ? pair_latch : watchdog) + fair_wait + 2s).count() * 1'000'000;
  std::vector<std::string> left;
  for (;;) {
    left.clear();
    // In a cluster, the masters (a replica's keys are its master's).
    std::vector<RedisServer*> holders;
    if (in_cluster_) {
      for (int master : roles().masters) holders.push_back(&cluster_->node(static_cast<std::size_t>(master)));
    } else if (in_sentinel_) {
      // Every node that calls itself master: the one the sentinels name, and
      // a restarted one they have not turned into a replica yet.
      for (std::size_t i = 0; i < group_->nodes(); ++i) {
        if (!group_->node(i).running()) continue;
        ProbeReply role = RedisProbe(group_->node(i)).command({"ROLE"});
        if (!role.elements.empty() && role.elements[0].str == "master") holders.push_back(&group_->node(i));
      }
    } else {
      for (auto& server : servers_) holders.push_back(server.get());
    }
    for (RedisServer* server : holders) {
      RedisProbe probe(*server);
      for (auto& key : probe.keys()) {
        // A fenced lock's token counter is meant to stay (it has no expiry).
        if (kind_ == "fenced" && key.rfind("redisson_lock_token:", 0) == 0) continue;
        left.push_back(server_text(*server) + " " + key + " (pttl " + std::to_string(probe.pttl(key)) + ")");
      }
    }
    if (left.empty() || monotonic_ns() >= deadline) break;
    std::this_thread::sleep_for(100ms);
  }
  for (auto& key : left) failures_.push_back("key left behind: " + key);
  return static_cast<long>(left.size());
}

void controller::read_records() {
  for (auto& entry : fs::directory_iterator(run_dir_)) {
    if (entry.path().extension() != ".rec") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string tag;
      fields >> tag;
      if (tag == "S") {
        section s;
        int wrote = 0, write_valid = 0;
        fields >> s.lock >> s.mode >> s.enter >> s.exit >> s.valid_until >> wrote >> write_valid >> s.pid >> s.thread;
        if (!fields) continue;
        if (!(fields >> s.token)) s.token = 0;
        s.wrote = wrote != 0;
        s.write_valid = write_valid != 0;
        sections_.push_back(s);
      } else if (tag == "C") {
        call c;
        fields >> c.name >> c.start >> c.end >> c.wait_ms >> c.result >> c.pid >> c.thread;
        if (!fields) continue;
        if (!(fields >> c.lock >> c.mode)) c.lock = -1;
        calls_.push_back(c);
      } else if (tag == "I") {
        int lock = 0;
        fields >> lock;
        if (fields) ++intents_[lock];
      }
    }
  }
}

std::int64_t controller::stopped_during(long pid, std::int64_t start, std::int64_t end) const {
  auto found = stops_.find(pid);
  if (found == stops_.end()) return 0;
  std::int64_t total = 0;
  for (auto [from, to] : found->second) total += std::max<std::int64_t>(0, std::min(end, to) - std::max(start, from));
  return total;
}

void controller::print_faults_near(std::int64_t from, std::int64_t to) const {
  for (const auto& f : faults_) {
    if (f.end < from || f.start > to) continue;
    std::cout << "      fault " << ms_of(f.start) << ".." << ms_of(f.end) << " ms: " << f.kind << " " << f.detail << "\n";
  }
}

// The calls the holder's thread made in the seconds before the section: an
// earlier acquire that failed or timed out is often part of the story.
void controller::print_calls_before(const section& s) const {
  const std::int64_t from = s.enter - (watchdog + 2s).count() * 1'000'000;
  for (const auto& c : calls_) {
    if (c.pid != s.pid || c.thread != s.thread || c.end < from || c.start > s.exit) continue;
    std::cout << "        pid " << s.pid << " thread " << s.thread << ": " << c.name << "(" << c.wait_ms << " ms) "
              << ms_of(c.start) << ".." << ms_of(c.end) << " ms: " << c.result << "\n";
  }
}

std::string describe(const section& s) {
  std::ostringstream out;
  out << "pid " << s.pid << " thread " << s.thread << " " << s.mode << " [" << ms_of(s.enter) << ", "
      << ms_of(s.exit) << "] ms, valid_until " << (s.valid_until == 0 ? std::string("none") : std::to_string(ms_of(s.valid_until)))
      << (s.valid() ? " (valid at exit)" : " (invalid at exit)");
  return out.str();
}

// ---- liveness

// How long after a fault ended it may still slow a hand-off down. Every fault
// may have cost a holder its lease (paused or stopped servers, lost
// connections, a killed holder), and then the waiters wait for that lease to
// run out: a lease and a half-second. A fair queue may keep dead waiters of a
// killed or stopped worker (all its threads) at its head, each dropped
// fair_wait after its last attempt. After a kill -9 of a Sentinel master the
// group refuses lock writes until the restarted node is a replica again
// (about 10 s: the sentinels wait before correcting it).
std::int64_t controller::settle_after(const fault& f) const {
  milliseconds settle = watchdog + 500ms;
  if (kind_ == "fair" && (f.kind == "kill_worker" || f.kind.rfind("sigstop", 0) == 0))
    settle += fair_wait * thread_count;
  if (in_sentinel_ && f.kind == "master_kill") settle += 15s;
  if (const char* forced = std::getenv("WARDEN_TORTURE_SETTLE_MS"); forced && *forced)
    settle = milliseconds{std::atol(forced)};
  return settle.count() * 1'000'000;
}

// The last fault that was active, or still settling, at some time in [from,
// to]. The pair's lock and calls only feel the servers' faults: the workers
// stopped or killed are none of its business.
const fault* controller::disturbed(std::int64_t from, std::int64_t to, bool pair) const {
  const fault* found = nullptr;
  for (const auto& f : faults_) {
    if (pair && (f.kind == "kill_worker" || f.kind.rfind("sigstop", 0) == 0)) continue;
    if (f.start <= to && f.end + settle_after(f) >= from) found = &f;
  }
  return found;
}

namespace {

std::string percentiles(std::vector<std::int64_t> ns) {
  if (ns.empty()) return "none";
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    std::int64_t v = ns[std::min(ns.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ns.size())))];
    if (v == INT64_MAX) return std::string("never");
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << static_cast<double>(v) / 1e6;
    return out.str();
  };
  return "p50 " + at(0.5) + " / p90 " + at(0.9) + " / p99 " + at(0.99) + " / max " + at(1.0) + " ms";
}

}  // namespace

// Liveness, judged only where no fault was active or settling (settle_after):
// a lock let go while somebody wanted it (a waiter at the release, or one
// that came while the lock was free) is held again within the bound, timed
// from the start of the holder's unlock() (or the later waiter's call) to the
// return of the next acquire; and no call runs past its wait by more than the
// bound (a call held up until some timer fires). Readers of a ReadWriteLock
// count as a release only when the last holder lets go.
// WARDEN_TORTURE_SETTLE_MS replaces every settling margin (a diagnostic: 0
// shows what faults do to hand-offs).
std::string controller::check_liveness() {
  const std::int64_t slack_ms = env_long("WARDEN_TORTURE_SLACK_MS", 300);
  const std::int64_t bound_ms = handoff_ms_ + std::max<std::int64_t>(0, slack_ms - 300);
  const std::int64_t bound = bound_ms * 1'000'000;
  const std::int64_t lease = watchdog.count() * 1'000'000;

  // Holds and waits per lock, from each thread's calls in order.
  std::map<int, std::vector<hold>> holds;
  std::map<int, std::vector<waiter>> waits;
  std::map<std::pair<long, int>, std::pair<int, std::size_t>> open;  // thread → its hold (lock, index)
  std::int64_t longest_wait = 0;
  for (const auto& c : calls_) {
    if (c.lock < 0) continue;
    const auto who = std::make_pair(c.pid, c.thread);
    if (c.name == "unlock") {
      auto found = open.find(who);
      if (found == open.end() || found->second.first != c.lock) continue;
      hold& h = holds[c.lock][found->second.second];
      h.released = c.start;
      h.unlock_result = c.result;
      open.erase(found);
      continue;
    }
    if (c.wait_ms > 0) {
      waits[c.lock].push_back({c.start, c.end, c.start + c.wait_ms * 1'000'000, c.pid, c.thread});
      longest_wait = std::max(longest_wait, c.wait_ms * 1'000'000);
    }
    if (c.result != "ok") continue;
    holds[c.lock].push_back({c.lock, c.mode, c.pid, c.thread, c.end, INT64_MAX, ""});
    open[who] = {c.lock, holds[c.lock].size() - 1};
  }
  // A killed worker's holds last until its lease ran out after the kill.
  for (auto& [lock, list] : holds)
    for (auto& h : list)
      if (h.released == INT64_MAX && killed_at_.count(h.pid) != 0)
        h.released = std::max(h.granted, killed_at_[h.pid]) + lease;

  std::vector<std::int64_t> latencies, pair_latencies;
  long over = 0, not_judged = 0, printed = 0, at_release = 0;
  for (auto& [lock, list] : holds) {
    std::sort(list.begin(), list.end(), [](const hold& a, const hold& b) { return a.granted < b.granted; });
    auto& lock_waits = waits[lock];
    std::sort(lock_waits.begin(), lock_waits.end(), [](const waiter& a, const waiter& b) { return a.start < b.start; });
    // The two latest releases among the holds granted up to each index: was
    // anybody but the one letting go still holding at that moment?
    using latest = std::pair<std::int64_t, std::size_t>;  // release, index
    std::vector<latest> top1(list.size()), top2(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      latest first{-1, i}, second{-1, i};
      if (i > 0) first = top1[i - 1], second = top2[i - 1];
      latest mine{list[i].released, i};
      if (mine.first > first.first) {
        second = first;
        first = mine;
      } else if (mine.first > second.first) {
        second = mine;
      }
      top1[i] = first;
      top2[i] = second;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const hold& h = list[i];
      if (h.released == INT64_MAX || h.unlock_result != "ok") continue;
      const std::int64_t r0 = h.released;
      // The holds granted at or before r0 end at `next`.
      auto next = std::upper_bound(list.begin(), list.end(), r0,
                                   [](std::int64_t t, const hold& x) { return t < x.granted; });
      const std::size_t last = static_cast<std::size_t>(next - list.begin()) - 1;
      const latest other = top1[last].second == i ? top2[last] : top1[last];
      if (other.first > r0) continue;  // still held by somebody else: not free
      // The lock is free from r0 until the next grant. Judged when somebody
      // wanted it meanwhile and would have waited on past the bound: timed
      // from r0 for a waiter already waiting then, else from the start of
      // the call that found it free.
      const std::int64_t granted = next == list.end() ? INT64_MAX : next->granted;
      const waiter* wanting = nullptr;
      std::int64_t since = 0;
      auto w = std::lower_bound(lock_waits.begin(), lock_waits.end(), r0 - longest_wait,
                                [](const waiter& x, std::int64_t t) { return x.start < t; });
      for (; w != lock_waits.end() && w->start < granted; ++w) {
        if (w->end <= r0 || w->deadline < std::max(r0, w->start) + bound) continue;
        wanting = &*w;  // in order of start: the earliest
        since = std::max(r0, w->start);
        break;
      }
      if (!wanting) continue;
      if (disturbed(since, since + bound, lock == pair_lock_)) {
        ++not_judged;
        continue;
      }
      const std::int64_t latency = granted == INT64_MAX ? INT64_MAX : granted - since;
      latencies.push_back(latency);
      if (lock == pair_lock_) pair_latencies.push_back(latency);
      if (since == r0) ++at_release;
      if (latency <= bound) continue;
      ++over;
      if (++printed > 10) continue;
      std::cout << "LIVENESS: " << lock_names_[lock] << " let go by pid " << h.pid << " thread " << h.thread << " ("
                << h.mode << ") at " << ms_of(r0) << " ms; pid " << wanting->pid << " thread " << wanting->thread
                << " waited from " << ms_of(wanting->start) << " ms (until " << ms_of(wanting->deadline)
                << " ms); held again ";
      if (next == list.end()) {
        std::cout << "never\n";
      } else {
        std::cout << ms_of(latency) << " ms after " << ms_of(since) << " ms, by pid " << next->pid << " thread "
                  << next->thread << " (" << next->mode << ")\n";
      }
      print_faults_near(since - 10'000'000'000, since + std::min<std::int64_t>(latency, 10'000'000'000));
    }
  }
  if (over > 0)
    failures_.push_back(std::to_string(over) + " hand-offs over the liveness bound of " + std::to_string(bound_ms) +
                        " ms (a lock let go and wanted, no fault active)");

  // No call past its wait by more than the bound where no fault was active.
  long calls_judged = 0, calls_over = 0;
  std::int64_t worst = 0;
  for (const auto& c : calls_) {
    if (disturbed(c.start, c.start + c.wait_ms * 1'000'000 + bound, pair_pids_.count(c.pid) != 0)) continue;
    ++calls_judged;
    std::int64_t excess = c.end - c.start - c.wait_ms * 1'000'000;
    worst = std::max(worst, excess);
    if (excess <= bound) continue;
    if (++calls_over <= 10) {
      std::cout << "LIVENESS: " << c.name << "(" << c.wait_ms << " ms) by pid " << c.pid << " thread " << c.thread
                << " took " << ms_of(c.end - c.start) << " ms (" << c.result << "), from " << ms_of(c.start)
                << " ms, no fault active\n";
      print_faults_near(c.start - 10'000'000'000, c.end);
    }
  }
  if (calls_over > 0)
    failures_.push_back(std::to_string(calls_over) + " calls over their wait by more than the liveness bound of " +
                        std::to_string(bound_ms) + " ms (no fault active)");

  std::ostringstream out;
  out << "  liveness (bound " << bound_ms << " ms, judged where no fault was active or settling):\n"
      << "    hand-offs (a lock let go and wanted): " << latencies.size() << " judged (" << at_release
      << " with a waiter at the release), " << percentiles(latencies) << ", " << over << " over the bound; "
      << not_judged << " near faults not judged\n";
  if (pair_lock_ >= 0)
    out << "      of which the pair's (" << lock_names_[pair_lock_] << "): " << pair_latencies.size() << ", "
        << percentiles(pair_latencies) << "\n";
  out
      << "    calls: " << calls_judged << " judged, worst " << std::fixed << std::setprecision(1)
      << static_cast<double>(worst) / 1e6 << " ms over the wait, " << calls_over << " over the bound\n";
  if (latencies.empty() && !control_) failures_.push_back("no hand-off judged: the liveness check proves nothing");
  return out.str();
}

int controller::analyse() {
  read_records();

  // Overlaps, per lock, in order of entry. With --cluster-kill, an overlap
  // of valid holders where the lock's master was killed between the first
  // one's entry (less a lease: the hold may be older) and the second one's
  // is what asynchronous replication allows: counted apart. With
  // --sentinel, such an overlap (or one after SENTINEL FAILOVER) is a
  // violation like any other, counted apart to say what caused it.
  const std::int64_t hold_age = (watchdog + 500ms).count() * 1'000'000;
  long valid_overlaps = 0, invalid_overlaps = 0, kill_overlaps = 0, failover_overlaps = 0;
  std::set<int> kill_locks;            // locks on which a kill -9 let two valid holders overlap
  std::set<const fault*> overlap_kills;  // the kills -9 after which two valid holders overlapped
  std::map<int, std::vector<const section*>> by_lock;
  for (const auto& s : sections_) by_lock[s.lock].push_back(&s);
  for (auto& [lock, list] : by_lock) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->enter < b->enter; });
    for (std::size_t i = 0; i < list.size(); ++i) {
      for (std::size_t j = i + 1; j < list.size() && list[j]->enter < list[i]->exit; ++j) {
        const section &a = *list[i], &b = *list[j];
        if (a.mode == 'r' && b.mode == 'r') continue;
        const fault* cause =
            in_sentinel_ && a.valid() && b.valid() ? last_failover(lock, a.enter - hold_age, b.enter) : nullptr;
        if (cause) {
          if (cause->kind == "master_kill") {
            ++kill_overlaps;
            kill_locks.insert(lock);
            overlap_kills.insert(cause);
          } else {
            ++failover_overlaps;
          }
        }
        if (excuse_kills_ && a.valid() && b.valid() && after_master_kill(lock, a.enter - hold_age, b.enter)) {
          kill_locks.insert(lock);
          if (++kill_overlaps <= 5) {
            std::cout << "after a kill -9 of its master (allowed, DESIGN §7): two valid holders of "
                      << lock_names_[lock] << " overlap\n      " << describe(a) << "\n      " << describe(b) << "\n";
            print_faults_near(a.enter - hold_age, std::max(a.exit, b.exit));
          }
        } else if (a.valid() && b.valid()) {
          if (++valid_overlaps <= (control_ ? 2 : 10)) {
            std::cout << (control_ ? "caught (expected without a lock): " : "VIOLATION: ")
                      << "two valid holders of " << lock_names_[lock] << " overlap"
                      << (!cause                           ? ""
                          : cause->kind == "master_kill" ? " after a kill -9 of the master"
                                                         : " after SENTINEL FAILOVER")
                      << "\n"
                      << "      " << describe(a) << "\n";
            if (!control_) print_calls_before(a);
            std::cout << "      " << describe(b) << "\n";
            if (!control_) print_calls_before(b);
            print_faults_near(a.enter - (watchdog + 2s).count() * 1'000'000, std::max(a.exit, b.exit));
          }
        } else {
          ++invalid_overlaps;
        }
      }
    }
  }
  long kills = 0;
  for (const auto& f : faults_) kills += f.kind == "master_kill" ? 1 : 0;
  if (valid_overlaps > 0 && !control_) {
    std::string why;
    if (in_sentinel_)
      why = " (" + std::to_string(kill_overlaps) + " after a kill -9 of the master, in " +
            std::to_string(overlap_kills.size()) + " of " + std::to_string(kills) + " kills; " +
            std::to_string(failover_overlaps) + " after SENTINEL FAILOVER)";
    failures_.push_back(std::to_string(valid_overlaps) + " overlaps among valid holders" + why);
  }

  // Fencing tokens: one per hold, never repeated, and growing from one valid
  // holder to the next (a holder that was stopped past its lease may enter
  // after a later holder and carry a lower token: that is what tokens are
  // for, so only holders valid at their exit are ordered).
  std::ostringstream tokens;
  if (kind_ == "fenced") {
    long repeated = 0, out_of_order = 0, without = 0, checked_pairs = 0, after_kill = 0;
    std::int64_t highest = 0;
    for (auto& [lock, list] : by_lock) {
      std::map<std::int64_t, const section*> seen;
      for (const section* s : list) {
        if (s->token <= 0) {
          ++without;
          continue;
        }
        highest = std::max(highest, s->token);
        if (seen.emplace(s->token, s).second) continue;
        // A kill -9 can lose the counter's last increments with the holds
        // (allowed with --cluster-kill, not with --sentinel).
        bool kill = kill_masters_ && after_master_kill(lock, seen[s->token]->enter - hold_age, s->enter);
        if (kill) ++after_kill;
        if (kill && excuse_kills_) {
        } else if (++repeated <= 5) {
          std::cout << "VIOLATION: token " << s->token << " of " << lock_names_[lock] << " drawn twice\n      "
                    << describe(*seen[s->token]) << "\n      " << describe(*s) << "\n";
        }
      }
      // `list` is in order of entry. Sweep the valid sections by exit: the
      // highest token among those that ended before each one entered must be
      // below its own.
      std::vector<const section*> valid, by_exit;
      for (const section* s : list)
        if (s->valid() && s->token > 0) valid.push_back(s);
      by_exit = valid;
      std::sort(by_exit.begin(), by_exit.end(), [](auto* a, auto* b) { return a->exit < b->exit; });
      std::size_t ended = 0;
      const section* top = nullptr;
      for (const section* s : valid) {
        while (ended < by_exit.size() && by_exit[ended]->exit < s->enter) {
          if (!top || by_exit[ended]->token > top->token) top = by_exit[ended];
          ++ended;
        }
        if (!top) continue;
        ++checked_pairs;
        if (top->token < s->token) continue;
        bool kill = kill_masters_ && after_master_kill(lock, top->enter - hold_age, s->enter);
        if (kill) ++after_kill;
        if (kill && excuse_kills_) {
        } else if (++out_of_order <= 5) {
          std::cout << "VIOLATION: a later valid holder of " << lock_names_[lock] << " has a lower token\n      token "
                    << top->token << ": " << describe(*top) << "\n      token " << s->token << ": " << describe(*s)
                    << "\n";
        }
      }
    }
    if (repeated > 0) failures_.push_back(std::to_string(repeated) + " tokens drawn twice");
    if (out_of_order > 0) failures_.push_back(std::to_string(out_of_order) + " valid holders with a lower token than an earlier one");
    if (without > 0) failures_.push_back(std::to_string(without) + " fenced sections without a token");
    tokens << "  fencing tokens: highest " << highest << ", repeated " << repeated << ", lower than an earlier valid "
           << "holder's " << out_of_order << " (of " << checked_pairs << " valid successions checked)";
    if (excuse_kills_) tokens << ", repeated or lower after a kill -9 of the master (allowed) " << after_kill;
    if (in_sentinel_) tokens << ", of which after a kill -9 of the master " << after_kill;
    tokens << "\n";
  }

  // Bounds: a call takes at most its wait plus command_timeout (Config's
  // promise), plus slack for a loaded machine; time stopped does not count.
  const std::int64_t slack_ms = env_long("WARDEN_TORTURE_SLACK_MS", 300);
  std::map<std::string, std::int64_t> worst_excess;  // per call: max(duration - wait) in ms
  std::map<std::string, std::map<std::string, long>> results;
  long bound_violations = 0;
  for (const auto& c : calls_) {
    ++results[c.name][c.result];
    std::int64_t duration = c.end - c.start - stopped_during(c.pid, c.start, c.end);
    std::int64_t excess = ms_of(duration) - c.wait_ms;
    auto& worst = worst_excess.try_emplace(c.name, excess).first->second;
    worst = std::max(worst, excess);
    if (excess > command_timeout_of(c.pid) + slack_ms && ++bound_violations <= 10) {
      std::cout << "VIOLATION: " << c.name << "(" << c.wait_ms << " ms) by pid " << c.pid << " thread " << c.thread
                << " took " << ms_of(duration) << " ms (" << c.result << "), from " << ms_of(c.start) << " ms\n";
      print_faults_near(c.start, c.end);
    }
  }
  if (bound_violations > 0) failures_.push_back(std::to_string(bound_violations) + " calls past their bound");

  const std::string liveness = check_liveness();

  // Counters: each write that the record says happened added one.
  std::ostringstream counters;
  long lost_updates = 0;
  for (int lock = 0; lock < static_cast<int>(lock_names_.size()); ++lock) {
    std::int64_t value = 0;
    std::ifstream in(run_dir_ / ("counter-" + std::to_string(lock)), std::ios::binary);
    in.read(reinterpret_cast<char*>(&value), sizeof value);
    long writes = 0, stale_writes = 0;
    for (const auto& s : sections_) {
      if (s.lock != lock || !s.wrote) continue;
      ++writes;
      if (!s.write_valid) ++stale_writes;
    }
    long unsure = intents_[lock] - writes;  // killed between "about to write" and its record
    counters << "    " << lock_names_[lock] << ": counter " << value << ", recorded writes " << writes;
    if (unsure > 0) counters << " (+ up to " << unsure << " by killed workers)";
    if (kill_locks.count(lock) != 0) {
      counters << ": not checked (a kill -9 of its master let two valid holders overlap"
               << (excuse_kills_ ? ")\n" : ": a failure above)\n");
      continue;
    }
    if (stale_writes > 0) {
      // A holder stopped between its validity check and its write wrote after
      // its lease: the library cannot prevent that, so the count is no proof.
      counters << ", " << stale_writes << " written after the lease: not checked\n";
      continue;
    }
    counters << "\n";
    if (value < writes || value > writes + unsure) {
      lost_updates += writes - value;
      if (!control_)
        failures_.push_back("counter " + lock_names_[lock] + " is " + std::to_string(value) + ", expected " +
                            std::to_string(writes) + (unsure > 0 ? " .. " + std::to_string(writes + unsure) : ""));
    }
  }

  // The figures.
  std::map<char, long> completed, valid_at_exit;
  for (const auto& s : sections_) {
    ++completed[s.mode];
    if (s.valid()) ++valid_at_exit[s.mode];
  }
  std::map<std::string, long> fault_counts;
  for (const auto& f : faults_) ++fault_counts[f.kind];

  std::cout << "torture " << name_ << ": " << seconds_ << " s, " << worker_count << " workers x " << thread_count
            << " threads, " << lock_names_.size() << " locks";
  if (pair_lock_ >= 0)
    std::cout << " (" << lock_names_[pair_lock_] << ": the pair's, " << pair_threads << " threads of one Client, watchdog "
              << pair_watchdog.count() << " ms, command_timeout " << pair_command_timeout.count() << " ms)";
  if (in_cluster_) {
    std::cout << " (";
    for (std::size_t i = 0; i < lock_names_.size(); ++i)
      std::cout << (i ? ", " : "") << lock_names_[i] << " slot " << lock_slots_[i];
    std::cout << "; 3 masters + 3 replicas)";
  }
  if (in_sentinel_) std::cout << " (1 master + 1 replica + 3 sentinels, quorum 2, down-after 1000 ms)";
  std::cout << ", watchdog " << watchdog.count() << " ms, command_timeout "
            << command_timeout.count() << " ms\n";
  long all_sections = 0, all_valid = 0;
  for (auto [mode, n] : completed) all_sections += n;
  for (auto [mode, n] : valid_at_exit) all_valid += n;
  std::cout << "  sections completed: " << all_sections << " (" << all_valid << " valid at exit):";
  for (auto [mode, n] : completed)
    std::cout << " " << (mode == 'x' ? "exclusive" : mode == 'r' ? "read" : "write") << " " << n << " ("
              << valid_at_exit[mode] << " valid at exit)";
  std::cout << "\n  faults injected:";
  if (fault_counts.empty()) std::cout << " none";
  for (auto& [name, n] : fault_counts) std::cout << " " << name << " " << n;
  std::vector<std::string> expected{"server_restart", "client_kill", "client_pause", "debug_sleep", "sigstop", "kill_worker"};
  if (in_cluster_) {
    expected = {"failover", "slot_move", "client_kill", "master_pause", "client_pause", "sigstop", "kill_worker"};
    if (kill_masters_) expected.push_back("master_kill");
  }
  if (in_sentinel_)
    expected = {"failover", "master_kill", "replica_pause", "client_kill", "client_pause", "sigstop", "kill_worker"};
  for (const auto& name : expected) {
    bool seen = false;
    for (auto& [injected, n] : fault_counts) seen |= injected.rfind(name, 0) == 0;
    if (!seen && !control_) std::cout << " (" << name << " not reached: a longer run covers it)";
  }
  std::cout << "\n  overlaps among valid holders: " << valid_overlaps << (control_ ? " (must be > 0)" : " (must be 0)")
            << "\n  overlaps where a holder was already invalid (allowed): " << invalid_overlaps << "\n";
  if (in_sentinel_) {
    std::cout << "    of which after a kill -9 of the master: " << kill_overlaps << ", in " << overlap_kills.size()
              << " of " << kills << " kills (not allowed: replica acknowledgement exists to prevent them)\n"
              << "    of which after SENTINEL FAILOVER: " << failover_overlaps << "\n"
              << "  kill -9 of the master to the first section entered afterwards: " << recovery_figures("master_kill")
              << "\n  SENTINEL FAILOVER to the first section entered afterwards: " << recovery_figures("failover")
              << "\n";
  }
  if (excuse_kills_)
    std::cout << "  overlaps among valid holders after a kill -9 of the lock's master (a hold lost with"
              << " asynchronous replication, allowed: DESIGN §7): " << kill_overlaps << " on " << kill_locks.size()
              << " locks\n";
  std::cout << "  calls (max duration over the wait; bound command_timeout " << command_timeout.count()
            << (pair_lock_ >= 0 ? " ms (the pair's " + std::to_string(pair_command_timeout.count()) + ")" : " ms")
            << " + slack " << slack_ms << " ms):\n";
  for (auto& [name, by_result] : results) {
    std::cout << "    " << name << ": max +" << worst_excess[name] << " ms;";
    for (auto& [result, n] : by_result) std::cout << " " << result << " " << n;
    std::cout << "\n";
  }
  if (!control_) std::cout << liveness;
  std::cout << tokens.str();
  std::cout << "  counters" << (control_ ? " (must lose updates)" : "") << ":\n" << counters.str();
  std::cout << sweep_note_;
  std::cout << "  keys left: " << keys_left_ << "\n";
  std::cout << "  workers started " << workers_.size() << ", unexpected exits " << unexpected_exits_ << "\n";

  if (control_) {
    if (valid_overlaps == 0) failures_.push_back("negative control: the checker saw no overlap between unlocked workers");
    if (lost_updates <= 0) failures_.push_back("negative control: the counters lost no update without the lock");
    if (sections_.empty()) failures_.push_back("negative control: no sections recorded");
  } else if (completed.empty()) {
    failures_.push_back("no critical section completed: the run proves nothing");
  }
  for (const auto& failure : failures_) std::cout << "FAILED: " << failure << "\n";
  std::cout << (failures_.empty() ? "PASSED" : "FAILED") << " (records and fault timeline in " << run_dir_.string()
            << ")\n";
  return failures_.empty() ? 0 : 1;
}

int controller::run() {
  control_ = kind_ == "control";
  run_dir_ = fs::absolute(fs::path("torture-runs") / (name_ + "-" + std::to_string(::getpid())));
  fs::create_directories(run_dir_);
  {
    std::string path = (run_dir_ / "slots").string();
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || ::ftruncate(fd, warden::torture::max_slots * sizeof(int)) != 0) throw std::runtime_error("slot file");
    void* mapped = ::mmap(nullptr, warden::torture::max_slots * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) throw std::runtime_error("mmap of the slot file");
    slots_ = static_cast<std::atomic<int>*>(mapped);
  }
  start_servers();

  const std::int64_t start = monotonic_ns();
  end_ns_ = start + seconds_ * 1'000'000'000;
  live_.assign(worker_count, 0);
  for (int slot = 0; slot < worker_count; ++slot) spawn_worker(slot);
  if (pair_lock_ >= 0) spawn_pair();

  if (!control_ && late_wakeup_ms_ == 0) {
    // Faults after a calm start, in which the liveness check judges every
    // hand-off (later only those away from faults are), and none in the calm
    // tail: a fair waiter killed late is dropped only after fair_wait, by
    // another attempt.
    std::int64_t calm = (fair_wait + 500ms).count() * 1'000'000;
    std::this_thread::sleep_for(calm_start);
    inject_faults(std::max(start, end_ns_ - calm));
  }
  wait_for_workers();
  keys_left_ = control_ ? 0 : keys_left();
  int code = analyse();
  // The negative control of liveness fails by design: nothing to keep.
  if ((code == 0 || late_wakeup_ms_ > 0) && std::getenv("WARDEN_TORTURE_KEEP") == nullptr) fs::remove_all(run_dir_);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // --handoff-ms MS: the liveness bound (default $WARDEN_TORTURE_HANDOFF_MS, else 500).
  // --late-wakeup MS: the liveness check's negative control (see the worker).
  long handoff_ms = env_long("WARDEN_TORTURE_HANDOFF_MS", 500), late_wakeup_ms = 0;
  while (args.size() >= 2 && (args[0] == "--handoff-ms" || args[0] == "--late-wakeup")) {
    (args[0] == "--handoff-ms" ? handoff_ms : late_wakeup_ms) = std::atol(args[1].c_str());
    args.erase(args.begin(), args.begin() + 2);
  }
  topology where = topology::single;
  if (!args.empty() && args[0] == "--cluster") where = topology::cluster;
  if (!args.empty() && args[0] == "--cluster-kill") where = topology::cluster_kill;
  if (!args.empty() && args[0] == "--sentinel") where = topology::sentinel;
  if (where != topology::single) args.erase(args.begin());
  const std::vector<std::string> replicated_kinds{"lock", "fair", "fenced", "spin", "rwlock"};
  const std::vector<std::string> kinds{"lock", "fair", "fenced", "spin", "rwlock", "redlock", "control"};
  if (args.empty() || args.size() > 2 || std::find(kinds.begin(), kinds.end(), args[0]) == kinds.end() ||
      (where != topology::single &&
       std::find(replicated_kinds.begin(), replicated_kinds.end(), args[0]) == replicated_kinds.end())) {
    std::cerr << "usage: warden-torture [OPTIONS] lock|fair|fenced|spin|rwlock|redlock|control [SECONDS]\n"
                 "       warden-torture [OPTIONS] --cluster|--cluster-kill|--sentinel lock|fair|fenced|spin|rwlock [SECONDS]\n"
                 "options: --handoff-ms MS   the liveness bound (default $WARDEN_TORTURE_HANDOFF_MS, else 500)\n"
                 "         --late-wakeup MS  negative control: one worker's waiters take each lock MS late (must fail)\n";
    return 2;
  }
  std::string kind = args[0];
  std::string name = (late_wakeup_ms > 0 ? "late-wakeup-" : "") + name_prefix(where) + kind;
  if (const char* kinds = std::getenv("WARDEN_TORTURE_KINDS"); kinds && *kinds) {
    std::string list = std::string(",") + kinds + ",";
    if (list.find("," + name + ",") == std::string::npos) {
      std::cout << "torture " << name << ": skipped (not in WARDEN_TORTURE_KINDS=" << kinds << ")\n";
      return 77;
    }
  }
  long seconds = args.size() == 2 ? std::atol(args[1].c_str()) : env_long("WARDEN_TORTURE_SECONDS", 12);
  if (kind == "control") seconds = std::min(seconds, 4L);
  if (seconds < 5 && kind != "control") seconds = 5;
  // A round of the cluster's or the sentinels' faults takes about 10 s (a
  // failover, waits for the group to settle): a run shorter than two rounds
  // says little.
  if (where != topology::single && args.size() == 1) seconds = std::max(seconds, 24L);
  try {
    controller run(kind, where, seconds, WARDEN_TORTURE_WORKER);
    run.set_liveness(handoff_ms, late_wakeup_ms);
    return run.run();
  } catch (const std::exception& error) {
    std::cerr << "torture " << name << ": " << error.what() << "\n";
    return 1;
  }
}
