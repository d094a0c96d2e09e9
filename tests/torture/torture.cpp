// warden-torture: the multi-process exclusion check.
//
//   warden-torture KIND [SECONDS]
//
// KIND: lock, fair, fenced, spin, rwlock, redlock, or control (the negative control: the
// workers skip the lock, and the run passes only if the checker sees them
// overlap). SECONDS defaults to $WARDEN_TORTURE_SECONDS, else 12. When
// $WARDEN_TORTURE_KINDS is set (comma-separated) and does not name KIND, the
// run is skipped (exit code 77).
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
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "torture_record.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::torture::monotonic_ns;
using warden::test::ChildProcess;
using warden::test::ProbeReply;
using warden::test::RedisProbe;
using warden::test::RedisServer;
namespace fs = std::filesystem;

// Short leases and time-outs, so that every fault matters within seconds.
constexpr milliseconds watchdog{1500};
constexpr milliseconds command_timeout{500};
constexpr milliseconds fair_wait{2000};
constexpr int lock_count = 2;
constexpr int worker_count = 3;
constexpr int thread_count = 3;

std::int64_t ms_of(std::int64_t ns) { return ns / 1'000'000; }

long env_long(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atol(value) : fallback;
}

struct fault {
  std::int64_t start = 0, end = 0;
  std::string kind, detail;
};

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
};

class controller {
 public:
  controller(std::string kind, long seconds, std::string worker_path)
      : kind_(std::move(kind)), seconds_(seconds), worker_path_(std::move(worker_path)),
        random_(static_cast<unsigned>(monotonic_ns())) {}

  int run();

 private:
  void start_servers();
  void spawn_worker(int slot);
  void inject_faults(std::int64_t until);
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
  std::int64_t stopped_during(long pid, std::int64_t start, std::int64_t end) const;
  void print_faults_near(std::int64_t from, std::int64_t to) const;
  void print_calls_before(const section& s) const;
  RedisServer& random_server() { return *servers_[pick(servers_.size())]; }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }

  std::string kind_;
  long seconds_;
  std::string worker_path_;
  std::mt19937 random_;
  bool control_ = false;
  fs::path run_dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
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
  long keys_left_ = 0;
  std::string sweep_note_;
  long unexpected_exits_ = 0;
};

void controller::start_servers() {
  if (kind_ == "redlock") {
    for (int i = 0; i < 3; ++i) servers_.push_back(std::make_unique<RedisServer>());
  } else {
    servers_.push_back(std::make_unique<RedisServer>(
        std::vector<std::string>{"--appendonly", "yes", "--appendfsync", "always"}));
  }
}

void controller::spawn_worker(int slot) {
  std::string urls;
  for (auto& server : servers_) urls += (urls.empty() ? "" : ",") + server->url();
  std::vector<std::string> args{
      kind_ == "control" ? "lock" : kind_,
      control_ ? "unlocked" : "locked",
      urls,
      run_dir_.string(),
      std::to_string(slot),
      std::to_string(thread_count),
      std::to_string(end_ns_),
      std::to_string(lock_count),
      std::to_string(watchdog.count()),
      std::to_string(command_timeout.count()),
      std::to_string(fair_wait.count()),
      std::to_string(random_()),
  };
  workers_.push_back({std::make_unique<ChildProcess>(worker_path_, args), false});
  live_[slot] = workers_.size() - 1;
}

void controller::note(std::int64_t start, const std::string& kind, const std::string& detail) {
  faults_.push_back({start, monotonic_ns(), kind, detail});
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
  std::size_t index = pick(servers_.size());
  long pause_ms = std::uniform_int_distribution<long>(200, 1500)(random_);
  RedisProbe probe(*servers_[index]);
  std::int64_t start = monotonic_ns();
  probe.command({"CLIENT", "PAUSE", std::to_string(pause_ms), "ALL"});
  std::this_thread::sleep_for(milliseconds{pause_ms});
  note(start, "client_pause", "server " + std::to_string(index) + " " + std::to_string(pause_ms) + " ms");
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
  spawn_worker(slot);
  note(start, "kill_worker", "pid " + std::to_string(old_pid) + " replaced by " +
                                 std::to_string(workers_.back().process->pid()));
}

void controller::inject_faults(std::int64_t until) {
  using fault_fn = void (controller::*)();
  std::vector<fault_fn> kinds{&controller::fault_server_restart, &controller::fault_client_kill,
                              &controller::fault_client_pause,   &controller::fault_debug_sleep,
                              &controller::fault_stop_holder,    &controller::fault_kill_worker};
  // Every kind once in a shuffled round, then a new round: a short run still
  // sees each kind.
  std::vector<fault_fn> round;
  while (monotonic_ns() < until) {
    if (round.empty()) {
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
  long depth = 0;
  {
    RedisProbe probe(*servers_[0]);
    for (int i = 0; i < lock_count; ++i) {
      ProbeReply length = probe.command({"LLEN", "redisson_lock_queue:{torture:" + std::to_string(i) + "}"});
      if (!length.is_error()) depth = std::max(depth, static_cast<long>(length.integer));
    }
  }
  const auto bound = watchdog + fair_wait * (depth + 1) + 2s;
  const std::int64_t start = monotonic_ns();
  std::vector<std::string> args{"fair", "sweep", servers_[0]->url(), run_dir_.string(), "0", "1",
                                std::to_string(start + bound.count() * 1'000'000), std::to_string(lock_count),
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
  std::int64_t deadline = monotonic_ns() + (watchdog + fair_wait + 2s).count() * 1'000'000;
  std::vector<std::string> left;
  for (;;) {
    left.clear();
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      RedisProbe probe(*servers_[i]);
      for (auto& key : probe.keys()) {
        // A fenced lock's token counter is meant to stay (it has no expiry).
        if (kind_ == "fenced" && key.rfind("redisson_lock_token:", 0) == 0) continue;
        left.push_back("server " + std::to_string(i) + " " + key + " (pttl " + std::to_string(probe.pttl(key)) + ")");
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
        if (fields) calls_.push_back(c);
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
      << ms_of(s.exit) << "] ms, valid_until " << (s.valid_until == 0 ? std::string("min") : std::to_string(ms_of(s.valid_until)))
      << (s.valid() ? " (valid at exit)" : " (invalid at exit)");
  return out.str();
}

int controller::analyse() {
  read_records();

  // Overlaps, per lock, in order of entry.
  long valid_overlaps = 0, invalid_overlaps = 0;
  std::map<int, std::vector<const section*>> by_lock;
  for (const auto& s : sections_) by_lock[s.lock].push_back(&s);
  for (auto& [lock, list] : by_lock) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->enter < b->enter; });
    for (std::size_t i = 0; i < list.size(); ++i) {
      for (std::size_t j = i + 1; j < list.size() && list[j]->enter < list[i]->exit; ++j) {
        const section &a = *list[i], &b = *list[j];
        if (a.mode == 'r' && b.mode == 'r') continue;
        if (a.valid() && b.valid()) {
          if (++valid_overlaps <= (control_ ? 2 : 10)) {
            std::cout << (control_ ? "caught (expected without a lock): " : "VIOLATION: ")
                      << "two valid holders of torture:" << lock << " overlap\n"
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
  if (valid_overlaps > 0 && !control_)
    failures_.push_back(std::to_string(valid_overlaps) + " overlaps among valid holders");

  // Fencing tokens: one per hold, never repeated, and growing from one valid
  // holder to the next (a holder that was stopped past its lease may enter
  // after a later holder and carry a lower token: that is what tokens are
  // for, so only holders valid at their exit are ordered).
  std::ostringstream tokens;
  if (kind_ == "fenced") {
    long repeated = 0, out_of_order = 0, without = 0, checked_pairs = 0;
    std::int64_t highest = 0;
    for (auto& [lock, list] : by_lock) {
      std::map<std::int64_t, const section*> seen;
      for (const section* s : list) {
        if (s->token <= 0) {
          ++without;
          continue;
        }
        highest = std::max(highest, s->token);
        if (!seen.emplace(s->token, s).second && ++repeated <= 5) {
          std::cout << "VIOLATION: token " << s->token << " of torture:" << lock << " drawn twice\n      "
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
        if (top->token >= s->token && ++out_of_order <= 5) {
          std::cout << "VIOLATION: a later valid holder of torture:" << lock << " has a lower token\n      token "
                    << top->token << ": " << describe(*top) << "\n      token " << s->token << ": " << describe(*s)
                    << "\n";
        }
      }
    }
    if (repeated > 0) failures_.push_back(std::to_string(repeated) + " tokens drawn twice");
    if (out_of_order > 0) failures_.push_back(std::to_string(out_of_order) + " valid holders with a lower token than an earlier one");
    if (without > 0) failures_.push_back(std::to_string(without) + " fenced sections without a token");
    tokens << "  fencing tokens: highest " << highest << ", repeated " << repeated << ", lower than an earlier valid "
           << "holder's " << out_of_order << " (of " << checked_pairs << " valid successions checked)\n";
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
    if (excess > command_timeout.count() + slack_ms && ++bound_violations <= 10) {
      std::cout << "VIOLATION: " << c.name << "(" << c.wait_ms << " ms) by pid " << c.pid << " thread " << c.thread
                << " took " << ms_of(duration) << " ms (" << c.result << "), from " << ms_of(c.start) << " ms\n";
      print_faults_near(c.start, c.end);
    }
  }
  if (bound_violations > 0) failures_.push_back(std::to_string(bound_violations) + " calls past their bound");

  // Counters: each write that the record says happened added one.
  std::ostringstream counters;
  long lost_updates = 0;
  for (int lock = 0; lock < lock_count; ++lock) {
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
    counters << "    torture:" << lock << ": counter " << value << ", recorded writes " << writes;
    if (unsure > 0) counters << " (+ up to " << unsure << " by killed workers)";
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
        failures_.push_back("counter torture:" + std::to_string(lock) + " is " + std::to_string(value) + ", expected " +
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

  std::cout << "torture " << kind_ << ": " << seconds_ << " s, " << worker_count << " workers x " << thread_count
            << " threads, " << lock_count << " locks, watchdog " << watchdog.count() << " ms, command_timeout "
            << command_timeout.count() << " ms\n";
  std::cout << "  sections completed:";
  for (auto [mode, n] : completed)
    std::cout << " " << (mode == 'x' ? "exclusive" : mode == 'r' ? "read" : "write") << " " << n << " ("
              << valid_at_exit[mode] << " valid at exit)";
  std::cout << "\n  faults injected:";
  if (fault_counts.empty()) std::cout << " none";
  for (auto& [name, n] : fault_counts) std::cout << " " << name << " " << n;
  for (const char* name : {"server_restart", "client_kill", "client_pause", "debug_sleep", "sigstop", "kill_worker"}) {
    bool seen = false;
    for (auto& [injected, n] : fault_counts) seen |= injected.rfind(name, 0) == 0;
    if (!seen && !control_) std::cout << " (" << name << " not reached: a longer run covers it)";
  }
  std::cout << "\n  overlaps among valid holders: " << valid_overlaps << (control_ ? " (must be > 0)" : " (must be 0)")
            << "\n  overlaps where a holder was already invalid (allowed): " << invalid_overlaps << "\n";
  std::cout << "  calls (max duration over the wait; bound command_timeout " << command_timeout.count()
            << " ms + slack " << slack_ms << " ms):\n";
  for (auto& [name, by_result] : results) {
    std::cout << "    " << name << ": max +" << worst_excess[name] << " ms;";
    for (auto& [result, n] : by_result) std::cout << " " << result << " " << n;
    std::cout << "\n";
  }
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
  run_dir_ = fs::absolute(fs::path("torture-runs") / (kind_ + "-" + std::to_string(::getpid())));
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

  if (!control_) {
    // Faults from the first second on, none in the calm tail: a fair waiter
    // killed late is dropped only after fair_wait, by another attempt.
    std::int64_t calm = (fair_wait + 500ms).count() * 1'000'000;
    std::this_thread::sleep_for(500ms);
    inject_faults(std::max(start, end_ns_ - calm));
  }
  wait_for_workers();
  keys_left_ = control_ ? 0 : keys_left();
  int code = analyse();
  if (code == 0 && std::getenv("WARDEN_TORTURE_KEEP") == nullptr) fs::remove_all(run_dir_);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: warden-torture lock|fair|fenced|spin|rwlock|redlock|control [SECONDS]\n";
    return 2;
  }
  std::string kind = argv[1];
  if (const char* kinds = std::getenv("WARDEN_TORTURE_KINDS"); kinds && *kinds) {
    std::string list = std::string(",") + kinds + ",";
    if (list.find("," + kind + ",") == std::string::npos) {
      std::cout << "torture " << kind << ": skipped (not in WARDEN_TORTURE_KINDS=" << kinds << ")\n";
      return 77;
    }
  }
  long seconds = argc == 3 ? std::atol(argv[2]) : env_long("WARDEN_TORTURE_SECONDS", 12);
  if (kind == "control") seconds = std::min(seconds, 4L);
  if (seconds < 5 && kind != "control") seconds = 5;
  try {
    return controller(kind, seconds, WARDEN_TORTURE_WORKER).run();
  } catch (const std::exception& error) {
    std::cerr << "torture " << kind << ": " << error.what() << "\n";
    return 1;
  }
}
