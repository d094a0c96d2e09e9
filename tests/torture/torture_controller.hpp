// warden-torture's controller (see torture.cpp): the run's settings, what
// the workers' records say (sections, calls, holds, waiters), and the
// controller that starts the servers and workers, injects the faults and
// judges the records. Its parts live in torture_controller.cpp (servers,
// workers, records, the run), torture_faults.cpp, torture_exclusion.cpp and
// torture_liveness.cpp.
#pragma once

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

namespace torture_run {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::test::ChildProcess;
using warden::test::ProbeReply;
using warden::test::RedisCluster;
using warden::test::RedisProbe;
using warden::test::RedisSentinelGroup;
using warden::test::RedisServer;
using warden::test::RedisServerOptions;
using warden::torture::monotonic_ns;
namespace fs = std::filesystem;

// Short leases and time-outs, so that every fault matters within seconds.
constexpr milliseconds watchdog{1500};
constexpr milliseconds command_timeout{500};
constexpr milliseconds fair_wait{2000};
// How far apart the pes kind's workers' wall clocks run (clock_skew.cpp).
constexpr std::chrono::seconds clock_skew{5 * 3600};
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

inline std::int64_t ms_of(std::int64_t ns) { return ns / 1'000'000; }

inline long env_long(const char* name, long fallback) {
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
inline std::string name_prefix(topology where) {
  switch (where) {
    case topology::single:
      return "";
    case topology::cluster:
      return "cluster-";
    case topology::cluster_kill:
      return "cluster-kill-";
    case topology::sentinel:
      return "sentinel-";
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
  std::vector<int> masters;       // node indexes
  std::map<int, int> replica_of;  // replica → its master
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
  std::string extra;  // the rest of the line (pes: a permit id, or a release's validity)
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
      : kind_(std::move(kind)),
        seconds_(seconds),
        worker_path_(std::move(worker_path)),
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
  // The permit check's negative control (semaphore): worker slot 0 gives two
  // permits back on every fourth release, so that more than N hold at once;
  // no faults.
  void set_over_release() {
    over_release_ = true;
    name_ = "over-release-" + name_;
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
  std::string until_whole(std::int64_t promoted);
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
  // ---- semaphore kinds (torture_permits.cpp)
  bool permit_kind() const { return kind_ == "semaphore" || kind_ == "pes"; }
  void set_up_permits();
  void fault_kill_permit_worker();
  void permit_back_after_kill(long pid, std::int64_t killed);
  long permit_holders_over(int lock, const std::vector<const section*>& list);
  long permits_held_at(const std::vector<hold>& list, std::size_t except, std::int64_t at) const;
  void check_permits_left();
  // Runs the worker in "sweep" mode for this kind (fair: until the queues are
  // empty; pes: until no permit is held) within `bound`; its exit code.
  int run_sweeper(milliseconds bound);
  // The pes kind: each worker's wall clock ran as far from the controller's
  // as its shim was told (else the skew proved nothing).
  void check_clock_skews();
  std::string permit_figures();
  std::string server_text(const RedisServer& server) const { return "port " + std::to_string(server.port()); }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }

  std::string kind_;
  long seconds_;
  std::string worker_path_;
  std::mt19937 random_;
  bool control_ = false;
  bool in_cluster_ = false;
  bool in_sentinel_ = false;
  bool kill_masters_ = false;  // masters are killed (cluster-kill, sentinel)
  bool excuse_kills_ = false;  // and overlaps a kill explains are allowed (cluster-kill)
  std::string name_;           // KIND, cluster-KIND, cluster-kill-KIND or sentinel-KIND
  fs::path run_dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::unique_ptr<RedisCluster> cluster_;
  std::unique_ptr<RedisSentinelGroup> group_;
  std::int64_t faults_until_ = 0;  // when the calm tail begins
  std::vector<std::string> lock_names_;
  int pair_lock_ = -1;  // the pair's own lock, the last of lock_names_ (-1: no pair)
  std::set<long> pair_pids_;
  std::vector<int> lock_slots_;  // cluster: each lock's slot
  std::atomic<int>* slots_ = nullptr;
  std::int64_t end_ns_ = 0;
  struct worker {
    std::unique_ptr<ChildProcess> process;
    bool killed_by_us = false;
  };
  std::vector<worker> workers_;    // every worker ever started
  std::vector<std::size_t> live_;  // index in workers_ per slot
  std::vector<fault> faults_;
  std::map<long, std::vector<std::pair<std::int64_t, std::int64_t>>> stops_;  // pid → stopped windows
  std::vector<section> sections_;
  std::vector<call> calls_;
  std::map<int, long> intents_;  // lock → "about to write" lines
  std::vector<std::string> failures_;
  std::map<long, std::int64_t> killed_at_;  // pid → when we killed it
  std::map<int, long long> clock_skews_;    // pes: slot -> the wall-clock skew its workers run with (s)
  long late_wakeup_ms_ = 0;                 // the liveness check's negative control (worker slot 0)
  long handoff_ms_ = 500;                   // the liveness bound, before the sanitizers' extra slack
  long keys_left_ = 0;
  std::string sweep_note_;
  long unexpected_exits_ = 0;
  // Semaphore kinds: each lock's permits; the most valid holders seen at
  // once per lock; pes: how long each permit of a killed holder took to come
  // back, and releases refused as expired while their permit was valid.
  std::vector<long> permits_;
  std::map<int, long> most_holders_;
  std::vector<std::int64_t> permit_back_ns_;
  long permits_given_back_ = 0;  // semaphore: by the controller, for the workers it killed
  bool over_release_ = false;
};

}  // namespace torture_run
