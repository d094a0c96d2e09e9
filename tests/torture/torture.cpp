// warden-torture: the multi-process exclusion check.
//
//   warden-torture [--cluster | --cluster-kill | --sentinel] KIND [SECONDS]
//
// KIND: lock, fair, fenced, spin, rwlock, redlock, semaphore, pes, or control (the negative control: the
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
//
// semaphore, pes (single server): the locks are a Semaphore, or a
// PermitExpirableSemaphore, of 2 and 3 permits (the pair's of 1), each
// section one permit (pes: kept by the watchdog or with a fixed lease, half
// and half). It fails when more than N holders valid at their exit were
// inside a semaphore of N permits at once (a Semaphore's permits are valid
// while held; a kept one until valid_until(id); a leased one until its
// acquire's start plus the lease); when a hand-off of a released permit to a
// waiter, or a call, outlasts the liveness bound away from faults; when a
// semaphore's count is not N once the workers stopped (and, pes, the held
// permits were reclaimed); for pes, when a release answered before its
// permit's bound ran out was refused as expired (reclaimed while its holder
// lived), or a killed holder's permit was not back within a lease and a
// period of the kill.
// A killed semaphore worker is stopped at a moment with no acquire or
// release in flight, and the permits it held are given back by the
// controller (they have no lease: docs/semaphores.md, limits).
// --over-release (semaphore) is the negative control: one worker gives two
// permits back on every fourth release, which must fail the run.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "torture_controller.hpp"

using torture_run::controller;
using torture_run::env_long;
using torture_run::name_prefix;
using torture_run::topology;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // --handoff-ms MS: the liveness bound (default $WARDEN_TORTURE_HANDOFF_MS, else 500).
  // --late-wakeup MS: the liveness check's negative control (see the worker).
  long handoff_ms = env_long("WARDEN_TORTURE_HANDOFF_MS", 500), late_wakeup_ms = 0;
  // --over-release (semaphore): the permit check's negative control.
  bool over_release = false;
  if (!args.empty() && args[0] == "--over-release") {
    over_release = true;
    args.erase(args.begin());
  }
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
  const std::vector<std::string> kinds{"lock",    "fair",    "fenced",    "spin", "rwlock",
                                       "redlock", "control", "semaphore", "pes"};
  if (args.empty() || args.size() > 2 || std::find(kinds.begin(), kinds.end(), args[0]) == kinds.end() ||
      (where != topology::single &&
       std::find(replicated_kinds.begin(), replicated_kinds.end(), args[0]) == replicated_kinds.end()) ||
      (over_release && args[0] != "semaphore")) {
    std::cerr
        << "usage: warden-torture [OPTIONS] lock|fair|fenced|spin|rwlock|redlock|semaphore|pes|control [SECONDS]\n"
           "       warden-torture [OPTIONS] --cluster|--cluster-kill|--sentinel lock|fair|fenced|spin|rwlock "
           "[SECONDS]\n"
           "options: --handoff-ms MS   the liveness bound (default $WARDEN_TORTURE_HANDOFF_MS, else 500)\n"
           "         --late-wakeup MS  negative control: one worker's waiters take each lock MS late (must fail)\n"
           "         --over-release    (semaphore) negative control: one worker releases two permits every\n"
           "                           fourth time (must fail)\n";
    return 2;
  }
  std::string kind = args[0];
  std::string name = (late_wakeup_ms > 0 ? "late-wakeup-" : "") + std::string(over_release ? "over-release-" : "") +
                     name_prefix(where) + kind;
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
    if (over_release) run.set_over_release();
    return run.run();
  } catch (const std::exception& error) {
    std::cerr << "torture " << name << ": " << error.what() << "\n";
    return 1;
  }
}
