// warden-torture's verdict on the records: overlapping sections, fencing
// tokens, calls past their bound, lost updates and keys left behind.
#include "torture_controller.hpp"

namespace torture_run {

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
    std::cout << "      fault " << ms_of(f.start) << ".." << ms_of(f.end) << " ms: " << f.kind << " " << f.detail
              << "\n";
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
  out << "pid " << s.pid << " thread " << s.thread << " " << s.mode << " [" << ms_of(s.enter) << ", " << ms_of(s.exit)
      << "] ms, valid_until " << (s.valid_until == 0 ? std::string("none") : std::to_string(ms_of(s.valid_until)))
      << (s.valid() ? " (valid at exit)" : " (invalid at exit)");
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
  std::set<int> kill_locks;              // locks on which a kill -9 let two valid holders overlap
  std::set<const fault*> overlap_kills;  // the kills -9 after which two valid holders overlapped
  std::map<int, std::vector<const section*>> by_lock;
  for (const auto& s : sections_) by_lock[s.lock].push_back(&s);
  long permit_overs = 0;  // semaphore kinds: entries that found N valid holders inside
  for (auto& [lock, list] : by_lock) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->enter < b->enter; });
    if (permit_kind()) {
      permit_overs += permit_holders_over(lock, list);
      continue;
    }
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
            std::cout << (control_ ? "caught (expected without a lock): " : "VIOLATION: ") << "two valid holders of "
                      << lock_names_[lock] << " overlap"
                      << (!cause                         ? ""
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
  if (permit_overs > 0)
    failures_.push_back(std::to_string(permit_overs) + " times more than N valid holders of a semaphore of N permits");
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
    long repeated_after_kill = 0;
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
        // Never excused, after a kill -9 of a master included (--cluster-kill
        // too): replica acknowledgement is on in both modes, and no token is
        // handed out before a replica has the increment that made it, so
        // the promoted replica's counter is at least every token handed out
        // (docs/kinds.md, what a fencing token guarantees).
        bool kill = kill_masters_ && after_master_kill(lock, seen[s->token]->enter - hold_age, s->enter);
        if (kill) {
          ++after_kill;
          ++repeated_after_kill;
        }
        if (++repeated <= 5) {
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
    if (out_of_order > 0)
      failures_.push_back(std::to_string(out_of_order) + " valid holders with a lower token than an earlier one");
    if (without > 0) failures_.push_back(std::to_string(without) + " fenced sections without a token");
    tokens << "  fencing tokens: highest " << highest << ", repeated " << repeated << ", lower than an earlier valid "
           << "holder's " << out_of_order << " (of " << checked_pairs << " valid successions checked)";
    if (excuse_kills_)
      tokens << ", lower after a kill -9 of the master (allowed) " << after_kill - repeated_after_kill
             << ", repeated after a kill -9 (a failure) " << repeated_after_kill;
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
    std::cout << " (" << lock_names_[pair_lock_] << ": the pair's, " << pair_threads
              << " threads of one Client, watchdog " << pair_watchdog.count() << " ms, command_timeout "
              << pair_command_timeout.count() << " ms)";
  if (in_cluster_) {
    std::cout << " (";
    for (std::size_t i = 0; i < lock_names_.size(); ++i)
      std::cout << (i ? ", " : "") << lock_names_[i] << " slot " << lock_slots_[i];
    std::cout << "; 3 masters + 3 replicas)";
  }
  if (in_sentinel_) std::cout << " (1 master + 1 replica + 3 sentinels, quorum 2, down-after 1000 ms)";
  std::cout << ", watchdog " << watchdog.count() << " ms, command_timeout " << command_timeout.count() << " ms\n";
  long all_sections = 0, all_valid = 0;
  for (auto [mode, n] : completed) all_sections += n;
  for (auto [mode, n] : valid_at_exit) all_valid += n;
  std::cout << "  sections completed: " << all_sections << " (" << all_valid << " valid at exit):";
  for (auto [mode, n] : completed)
    std::cout << " "
              << (mode == 'x'   ? "exclusive"
                  : mode == 'r' ? "read"
                                : "write")
              << " " << n << " (" << valid_at_exit[mode] << " valid at exit)";
  std::cout << "\n  faults injected:";
  if (fault_counts.empty()) std::cout << " none";
  for (auto& [name, n] : fault_counts) std::cout << " " << name << " " << n;
  std::vector<std::string> expected{"server_restart", "client_kill", "client_pause",
                                    "debug_sleep",    "sigstop",     "kill_worker"};
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
  if (permit_kind()) {
    std::cout << "\n  more than N valid holders at once (a semaphore of N permits): " << permit_overs
              << (over_release_ ? " (must be > 0: over-release)" : " (must be 0)") << "\n"
              << permit_figures();
  } else {
    std::cout << "\n";
  }
  std::cout << "  overlaps among valid holders: " << valid_overlaps << (control_ ? " (must be > 0)" : " (must be 0)")
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

  if (over_release_ && permit_overs == 0)
    failures_.push_back("negative control: the checker saw no more than N holders despite the over-release");
  if (control_) {
    if (valid_overlaps == 0)
      failures_.push_back("negative control: the checker saw no overlap between unlocked workers");
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

}  // namespace torture_run
