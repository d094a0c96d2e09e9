// warden-torture's fault injection: the single-server faults, the cluster's
// and the sentinel group's, and the loop that injects them one after another.
#include "torture_controller.hpp"

namespace torture_run {

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
  std::string text =
      in_cluster_ || in_sentinel_ ? node_text(static_cast<int>(index)) : "server " + std::to_string(index);
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
  if (permit_kind()) return fault_kill_permit_worker();
  int slot = static_cast<int>(pick(worker_count));
  worker& victim = workers_[live_[slot]];
  std::int64_t start = monotonic_ns();
  victim.killed_by_us = true;
  victim.process->kill(SIGKILL);
  victim.process->wait();
  long old_pid = victim.process->pid();
  killed_at_[old_pid] = start;
  spawn_worker(slot);
  note(start, "kill_worker",
       "pid " + std::to_string(old_pid) + " replaced by " + std::to_string(workers_.back().process->pid()));
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
  if (reply.is_error())
    throw std::runtime_error("CLUSTER FAILOVER on node " + std::to_string(replica) + ": " + reply.str);
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
    std::vector<std::string> argv{"MIGRATE",
                                  cluster_->node(target).host(),
                                  std::to_string(cluster_->node(target).port()),
                                  "",
                                  "0",
                                  "5000",
                                  "REPLACE",
                                  "KEYS"};
    for (const auto& key : keys.elements) argv.push_back(key.str);
    checked(from, argv);
    moved += static_cast<long>(keys.elements.size());
  }
  checked(to, {"CLUSTER", "SETSLOT", slot, "NODE", cluster_->node_id(target)});
  checked(from, {"CLUSTER", "SETSLOT", slot, "NODE", cluster_->node_id(target)});
  note(start, "slot_move",
       name + " slot " + slot + " from node " + std::to_string(source) + " to node " + std::to_string(target) +
           (held ? ", held" : ", not held") + ", " + std::to_string(moved) + " keys");
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
    if (monotonic_ns() > give_up)
      throw std::runtime_error("master kill: node " + std::to_string(replica) + " is no master after 30 s");
    std::this_thread::sleep_for(20ms);
  }
  std::int64_t promoted = monotonic_ns();
  cluster_->node(master).start();
  note(start, "master_kill",
       text + " killed; node " + std::to_string(replica) + " master after " + std::to_string(ms_of(promoted - start)) +
           " ms; restarted as a replica");
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

// Waits until the group is whole again after a master changed, and says
// when: a fault lasts until then. The new master has no replica until the
// sentinels turn the old one (or the restarted node) into one, which they do
// only after it has called itself master for a while (8 s), and replica
// acknowledgement refuses every lock write meanwhile: waiters rightly wait.
// A group that is not whole within 30 s fails the run.
std::string controller::until_whole(std::int64_t promoted) {
  group_->wait_until_healthy(30s);
  return "; whole again (the other node its replica) " + std::to_string(ms_of(monotonic_ns() - promoted)) + " ms after";
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
  const std::int64_t promoted = monotonic_ns();
  note(start, "failover",
       command + " (sentinel " + std::to_string(sentinel) + "): " + before + " replaced by " + node_text(replica) +
           " after " + std::to_string(ms_of(promoted - start)) + " ms" + until_whole(promoted));
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
  note(start, "master_kill",
       text + " killed; " + node_text(replica) + " master after " + std::to_string(ms_of(promoted - start)) +
           " ms; restarted as an empty master" + until_whole(promoted));
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
    kinds = {&controller::fault_failover,     &controller::fault_slot_move,    &controller::fault_warden_client_kill,
             &controller::fault_master_pause, &controller::fault_client_pause, &controller::fault_stop_holder,
             &controller::fault_kill_worker};
    if (kill_masters_) kinds.push_back(&controller::fault_master_kill);
  }
  if (in_sentinel_) {
    kinds = {&controller::fault_sentinel_failover,  &controller::fault_sentinel_kill, &controller::fault_replica_pause,
             &controller::fault_warden_client_kill, &controller::fault_client_pause,  &controller::fault_stop_holder,
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

}  // namespace torture_run
