// warden-torture's run: the servers, the workers, reading their records back,
// and the run from start to verdict.
#include "torture_controller.hpp"

#include <unistd.h>

namespace torture_run {

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
    // The AOF goes to memory (tmpfs) where there is one. The restart fault
    // models a server process that dies, which keeps what it wrote there as
    // on a disk; a disk adds fsync stalls of its own (0.8 s of a server
    // answering nobody, seen on a VM), which would be judged as a hand-off
    // warden made late.
    RedisServerOptions options;
    options.extra_args = {"--appendonly", "yes", "--appendfsync", "always"};
    if (::access("/dev/shm", W_OK | X_OK) == 0) options.parent_directory = "/dev/shm";
    servers_.push_back(std::make_unique<RedisServer>(std::move(options)));
  }
  if (permit_kind()) set_up_permits();
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
      control_                     ? "unlocked"
      : over_release_ && slot == 0 ? "over-release"
                                   : "locked",
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
  // The negative control stays as far past the bound as asked when the
  // sanitizer passes widen the bound by their extra slack (see liveness).
  if (late_wakeup_ms_ > 0 && slot == 0) {
    const long extra_slack_ms = std::max(0L, env_long("WARDEN_TORTURE_SLACK_MS", 300) - 300);
    args.push_back(std::to_string(late_wakeup_ms_ + extra_slack_ms));
  }
  std::string program = worker_path_;
#ifdef WARDEN_TORTURE_CLOCK_SKEW
  if (kind_ == "pes") {
    // Hours apart: even slots ahead, odd ones behind (clock_skew.cpp). `env`
    // execs the worker, so the pid is the worker's.
    const long long skew = (slot % 2 == 0 ? 1 : -1) * clock_skew.count();
    clock_skews_[slot] = skew;
    args.insert(args.begin(), {std::string("LD_PRELOAD=") + WARDEN_TORTURE_CLOCK_SKEW,
                               "WARDEN_CLOCK_SKEW_S=" + std::to_string(skew), worker_path_});
    program = "env";
  }
#endif
  workers_.push_back({std::make_unique<ChildProcess>(program, args), false});
  live_[slot] = workers_.size() - 1;
}

void controller::note(std::int64_t start, const std::string& kind, const std::string& detail) {
  faults_.push_back({start, monotonic_ns(), kind, detail, {}});
  std::ofstream(run_dir_ / "faults.log", std::ios::app)
      << ms_of(start) << ".." << ms_of(faults_.back().end) << " " << kind << " " << detail << "\n";
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
      failures_.push_back("worker " + std::to_string(w.process->pid()) + " exited with code " + std::to_string(code) +
                          " (see worker-" + std::to_string(w.process->pid()) + ".log)");
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
int controller::run_sweeper(milliseconds bound) {
  const std::int64_t start = monotonic_ns();
  std::vector<std::string> args{kind_,
                                "sweep",
                                worker_urls(),
                                run_dir_.string(),
                                "0",
                                "1",
                                std::to_string(start + bound.count() * 1'000'000),
                                joined_lock_names(false),
                                std::to_string(watchdog.count()),
                                std::to_string(command_timeout.count()),
                                std::to_string(fair_wait.count()),
                                "1"};
  ChildProcess sweeper(worker_path_, args);
  int code = 0;
  if (!sweeper.wait_for(bound + 15s, &code)) {
    sweeper.kill(SIGKILL);
    code = sweeper.wait();
  }
  return code;
}

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
  const int code = run_sweeper(bound);
  std::ostringstream note;
  note << "  fair queues after the workers stopped: up to " << depth << " waiters left, swept in "
       << ms_of(monotonic_ns() - start) << " ms (bound " << bound.count() << " ms)"
       << (code == 0 ? "" : ", NOT emptied") << "\n";
  sweep_note_ = note.str();
  if (code != 0) failures_.push_back("the fair queues were not empty within " + std::to_string(bound.count()) + " ms");
}

long controller::keys_left() {
  if (kind_ == "fair") sweep_fair_queues();
  if (permit_kind()) check_permits_left();
  if (!clock_skews_.empty()) check_clock_skews();
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
        // A semaphore's count has no expiry either (checked by check_permits_left).
        if (permit_kind() && std::find(lock_names_.begin(), lock_names_.end(), key) != lock_names_.end()) continue;
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
        std::getline(fields, c.extra);
        calls_.push_back(c);
      } else if (tag == "I") {
        int lock = 0;
        fields >> lock;
        if (fields) ++intents_[lock];
      }
    }
  }
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

  if (!control_ && late_wakeup_ms_ == 0 && !over_release_) {
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
  if ((code == 0 || late_wakeup_ms_ > 0 || over_release_) && std::getenv("WARDEN_TORTURE_KEEP") == nullptr)
    fs::remove_all(run_dir_);
  return code;
}

}  // namespace torture_run
