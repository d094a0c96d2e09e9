// warden-torture's semaphore kinds (semaphore, pes): the permits each
// semaphore starts with, the kill of a worker (given back by the controller
// for a Semaphore, whose permits have no lease; timed back for a
// PermitExpirableSemaphore), "at most N valid holders at once", and the
// permits left when the run is over.
#include <sys/wait.h>

#include "torture_controller.hpp"

namespace torture_run {

namespace {

std::string channel_of(const std::string& name) { return "redisson_sc:{" + name + "}"; }

}  // namespace

// Two contended semaphores of 2 and 3 permits among the workers' 9 threads,
// and the pair's of 1 permit, so that its two threads hand it back and forth
// as they do a lock. The count is Redisson's layout for both kinds: the
// string NAME.
void controller::set_up_permits() {
  permits_.clear();
  for (int i = 0; i < static_cast<int>(lock_names_.size()); ++i) permits_.push_back(i == pair_lock_ ? 1 : 2 + i);
  RedisProbe probe(*servers_.at(0));
  for (std::size_t i = 0; i < lock_names_.size(); ++i) {
    ProbeReply set = probe.command({"SET", lock_names_[i], std::to_string(permits_[i])});
    if (set.is_error()) throw std::runtime_error("SET " + lock_names_[i] + ": " + set.str);
  }
}

// kill -9 of a worker. A Semaphore's permits belong to nobody and have no
// lease: a dead holder's are gone for good (docs/semaphores.md, limits), and
// the run would drain. So the worker is stopped first, at a moment when none
// of its threads has an acquire or release in flight (its slots say so), and
// then killed; the permits its threads held (slot 1) are given back as an
// operator would, INCRBY and a publish of the new count. A pes worker is
// killed at once, and each permit its records say it held is timed until the
// server has reclaimed it.
void controller::fault_kill_permit_worker() {
  int slot = static_cast<int>(pick(worker_count));
  worker& victim = workers_[live_[slot]];
  ChildProcess& process = *victim.process;
  const long old_pid = process.pid();
  std::int64_t start = monotonic_ns();
  std::map<int, long> held;  // lock → permits
  if (kind_ == "semaphore") {
    const std::int64_t give_up = start + 3'000'000'000;
    for (;;) {
      const std::int64_t stopped = monotonic_ns();
      process.kill(SIGSTOP);
      // Until every thread has stopped (or it has exited). WNOWAIT leaves
      // the child to ChildProcess, which reaps it.
      siginfo_t info{};
      ::waitid(P_PID, static_cast<id_t>(old_pid), &info, WSTOPPED | WEXITED | WNOWAIT);
      held.clear();
      bool in_flight = false;
      for (int t = 0; t < thread_count; ++t) {
        const int state = slots_[slot * thread_count + t].load();
        in_flight |= state == 2 || state == 3;
        if (state == 1) ++held[slots_[warden::torture::permit_lock_slots + slot * thread_count + t].load()];
      }
      if (!in_flight) break;
      process.kill(SIGCONT);
      stops_[old_pid].push_back({stopped, monotonic_ns()});  // not counted in its calls' durations
      if (monotonic_ns() > give_up) {
        // Never caught between calls (its threads all busy waiting): a
        // kill now could leave permits nobody can count, so none this time.
        note(start, "kill_worker_skipped",
             "pid " + std::to_string(old_pid) + ": a call in flight at every stop for 3 s");
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500 + pick(3000)));
    }
    start = monotonic_ns();
  }
  victim.killed_by_us = true;
  process.kill(SIGKILL);
  process.wait();
  killed_at_[old_pid] = start;
  std::string detail = "pid " + std::to_string(old_pid);
  if (kind_ == "semaphore") {
    RedisProbe probe(*servers_.at(0));
    long given = 0;
    for (auto [lock, n] : held) {
      ProbeReply count = probe.command({"INCRBY", lock_names_.at(lock), std::to_string(n)});
      if (count.is_error()) throw std::runtime_error("INCRBY " + lock_names_.at(lock) + ": " + count.str);
      probe.command({"PUBLISH", channel_of(lock_names_.at(lock)), std::to_string(count.integer)});
      given += n;
    }
    permits_given_back_ += given;
    detail += " (stopped with no call in flight; its " + std::to_string(given) + " permits given back)";
  }
  spawn_worker(slot);
  detail += " replaced by " + std::to_string(workers_.back().process->pid());
  note(start, "kill_worker", detail);
  if (kind_ == "pes") permit_back_after_kill(old_pid, start);
}

// The permits the killed pes worker held by its records (an acquire that
// took one, and no release after it), each timed from the kill until it has
// left {NAME}:timeout. A kept permit's last renewal was at most a period
// before the kill, so it expires within a lease of the kill, a leased one
// within its lease (at most 1400 ms < the watchdog's), and the next script
// on the semaphore reclaims it: the other threads are there to run one.
void controller::permit_back_after_kill(long pid, std::int64_t killed) {
  std::map<int, std::pair<int, std::string>> last;  // thread → (lock, id), "" when released
  {
    std::ifstream in(run_dir_ / ("worker-" + std::to_string(pid) + ".rec"));
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string tag, name, result, mode, id;
      std::int64_t begin = 0, end = 0;
      long wait = 0, who = 0;
      int thread = 0, lock = 0;
      fields >> tag;
      if (tag != "C") continue;
      fields >> name >> begin >> end >> wait >> result >> who >> thread >> lock >> mode;
      if (!fields) continue;
      if (name == "release") {
        last[thread] = {lock, ""};
      } else if (result == "ok" && (fields >> id)) {
        last[thread] = {lock, id};
      }
    }
  }
  const std::int64_t bound =
      (watchdog + watchdog / 3).count() * 1'000'000 + env_long("WARDEN_TORTURE_SLACK_MS", 300) * 1'000'000;
  RedisProbe probe(*servers_.at(0));
  for (auto& [thread, held] : last) {
    if (held.second.empty()) continue;
    const std::string timeouts = "{" + lock_names_.at(held.first) + "}:timeout";
    for (;;) {
      ProbeReply score = probe.command({"ZSCORE", timeouts, held.second});
      const std::int64_t now = monotonic_ns();
      if (score.is_nil() || score.is_error()) {
        permit_back_ns_.push_back(now - killed);
        break;
      }
      if (now - killed > bound + 2'000'000'000) {
        permit_back_ns_.push_back(now - killed);
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    if (permit_back_ns_.back() > bound)
      failures_.push_back("a permit of killed pid " + std::to_string(pid) + " thread " + std::to_string(thread) +
                          " on " + lock_names_.at(held.first) + " came back " +
                          std::to_string(ms_of(permit_back_ns_.back())) + " ms after the kill (bound " +
                          std::to_string(ms_of(bound)) + " ms: a lease and a period, plus slack)");
  }
}

// At most N valid holders of a semaphore of N permits at any moment: the
// sections valid at their exit, swept in order of entry; each entry that
// finds N others valid inside is a violation.
long controller::permit_holders_over(int lock, const std::vector<const section*>& list) {
  const long permits = permits_.at(lock);
  std::vector<const section*> valid;
  for (const section* s : list)
    if (s->valid()) valid.push_back(s);
  // `list` is in order of entry; the active ones by exit.
  std::multimap<std::int64_t, const section*> active;
  long over = 0, most = 0;
  for (const section* s : valid) {
    while (!active.empty() && active.begin()->first <= s->enter) active.erase(active.begin());
    active.emplace(s->exit, s);
    most = std::max(most, static_cast<long>(active.size()));
    if (static_cast<long>(active.size()) <= permits) continue;
    if (++over > (over_release_ ? 2 : 10)) continue;
    std::cout << (over_release_ ? "caught (expected with an over-release): " : "VIOLATION: ") << active.size()
              << " valid holders of " << lock_names_[lock] << " (" << permits << " permits) at " << ms_of(s->enter)
              << " ms\n";
    std::int64_t from = s->enter;
    for (auto& [exit, other] : active) {
      from = std::min(from, other->enter);
      std::cout << "      pid " << other->pid << " thread " << other->thread << " [" << ms_of(other->enter) << ", "
                << ms_of(other->exit) << "] ms, valid_until "
                << (other->valid_until == INT64_MAX ? std::string("none (no lease)")
                                                    : std::to_string(ms_of(other->valid_until)))
                << "\n";
      if (!over_release_) print_calls_before(*other);
    }
    print_faults_near(from - (watchdog + 2s).count() * 1'000'000, s->exit);
  }
  most_holders_[lock] = most;
  return over;
}

// The permits held at `at` by the holds of `list` (in order of grant) other
// than `except`: granted at or before it, released after it.
long controller::permits_held_at(const std::vector<hold>& list, std::size_t except, std::int64_t at) const {
  long held = 0;
  for (std::size_t i = 0; i < list.size() && list[i].granted <= at; ++i)
    if (i != except && list[i].released > at) ++held;
  return held;
}

// Once the workers have stopped: every permit back. A pes semaphore first
// has its expired permits (killed holders') reclaimed by a sweeper reading
// acquired_permits() until none is held; then each count must be its N
// again: a permit lost (taken and never given back) or made up (released
// twice) shows here.
void controller::check_permits_left() {
  if (kind_ == "pes") {
    const auto bound = watchdog + watchdog / 3 + 2s;
    const std::int64_t start = monotonic_ns();
    const int code = run_sweeper(std::chrono::duration_cast<milliseconds>(bound));
    std::ostringstream note;
    note << "  permits held after the workers stopped reclaimed in " << ms_of(monotonic_ns() - start) << " ms (bound "
         << bound.count() << " ms)" << (code == 0 ? "" : ", NOT all") << "\n";
    sweep_note_ = note.str();
    if (code != 0)
      failures_.push_back("permits still held " + std::to_string(bound.count()) + " ms after the workers stopped");
  }
  RedisProbe probe(*servers_.at(0));
  for (std::size_t i = 0; i < lock_names_.size(); ++i) {
    ProbeReply count = probe.command({"GET", lock_names_[i]});
    const std::string text = count.is_nil() ? std::string("0") : count.str;
    const long left = std::atol(text.c_str());
    if (text != std::to_string(permits_[i]))
      failures_.push_back("semaphore " + lock_names_[i] + " has " + text + " free permits at the end, expected " +
                          std::to_string(permits_[i]) + (left < permits_[i] ? " (lost)" : " (made up)"));
  }
}

// The figures of the semaphore kinds.
std::string controller::permit_figures() {
  std::ostringstream out;
  out << "  permits:";
  for (std::size_t i = 0; i < lock_names_.size(); ++i)
    out << " " << lock_names_[i] << " " << permits_[i] << " (most valid holders at once "
        << most_holders_[static_cast<int>(i)] << ")";
  out << "\n";
  if (kind_ == "semaphore")
    out << "  permits given back by the controller for workers it killed: " << permits_given_back_ << "\n";
  if (kind_ == "pes") {
    std::vector<std::int64_t> back = permit_back_ns_;
    std::sort(back.begin(), back.end());
    out << "  permits of killed holders back in the pool after the kill: " << back.size();
    if (!back.empty())
      out << ", min " << ms_of(back.front()) << " / median " << ms_of(back[back.size() / 2]) << " / max "
          << ms_of(back.back()) << " ms";
    out << " (bound " << (watchdog + watchdog / 3).count() << " ms + slack)\n";
    // A release refused (lease expired, or no such permit held: one
    // reclaimed is no longer there) although its answer came before the
    // permit's bound ran out: the server reclaimed a permit whose holder was
    // alive and renewing it (or whose fixed lease had not run out).
    long releases = 0, expired = 0, expired_valid = 0;
    for (const auto& c : calls_) {
      if (c.name != "release") continue;
      ++releases;
      const bool expired_now =
          c.result.find("expired") != std::string::npos || c.result.find("owner") != std::string::npos;
      expired += expired_now ? 1 : 0;
      if (!expired_now || c.extra.rfind(" 1", 0) != 0) continue;
      if (++expired_valid <= 10)
        std::cout << "VIOLATION: a release by pid " << c.pid << " thread " << c.thread << " at " << ms_of(c.start)
                  << " ms of a permit of " << lock_names_.at(c.lock) << " still valid (" << c.extra
                  << ") was refused: " << c.result << "\n";
    }
    if (expired_valid > 0)
      failures_.push_back(std::to_string(expired_valid) + " permits reclaimed while their holder's bound said valid");
    out << "  releases: " << releases << ", refused as expired or not held " << expired
        << " (of which answered while the permit was valid: " << expired_valid << ", must be 0)\n";
  }
  return out.str();
}

void controller::check_clock_skews() {
  // A worker writes its wall clock minus the monotonic one when it starts;
  // both clocks' difference here, subtracted, leaves its skew.
  const auto offset_here = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch() - std::chrono::steady_clock::now().time_since_epoch());
  int checked = 0;
  for (const auto& [slot, skew] : clock_skews_) {
    std::ifstream file(run_dir_ / ("wall-offset-" + std::to_string(slot)));
    long long offset = 0;
    if (!(file >> offset)) {
      failures_.push_back("worker slot " + std::to_string(slot) + " wrote no wall-clock offset");
      continue;
    }
    const long long seen = offset - offset_here.count();
    if (seen < skew - 60 || seen > skew + 60) {
      failures_.push_back("worker slot " + std::to_string(slot) + "'s wall clock ran " + std::to_string(seen) +
                          " s from the controller's, not the " + std::to_string(skew) + " s it was given");
    }
    ++checked;
  }
  std::cout << "  wall clocks: " << checked << " worker slots ran " << clock_skew.count() / 3600
            << " h ahead or behind the server's (LD_PRELOAD shim), as checked\n";
}

}  // namespace torture_run
