// warden-torture's liveness judgement: hand-offs and calls away from faults
// within the bound.
#include "torture_controller.hpp"

namespace torture_run {

// ---- liveness

// How long after a fault ended it may still slow a hand-off down. Every fault
// may have cost a holder its lease (paused or stopped servers, lost
// connections, a killed holder), and then the waiters wait for that lease to
// run out: a lease and a half-second. A fair queue may keep dead waiters of a
// killed or stopped worker (all its threads) at its head, each dropped
// fair_wait after its last attempt. A Sentinel failover or master kill lasts
// until the group is whole again (until_whole), when lock writes are
// acknowledged again.
std::int64_t controller::settle_after(const fault& f) const {
  milliseconds settle = watchdog + 500ms;
  if (kind_ == "fair" && (f.kind == "kill_worker" || f.kind.rfind("sigstop", 0) == 0))
    settle += fair_wait * thread_count;
  // A killed pes holder's kept permit comes back up to a lease and a period
  // after the kill.
  if (kind_ == "pes" && f.kind == "kill_worker") settle += watchdog / 3;
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
    if (c.name == "unlock" || c.name == "release") {
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
      auto next =
          std::upper_bound(list.begin(), list.end(), r0, [](std::int64_t t, const hold& x) { return t < x.granted; });
      const std::size_t last = static_cast<std::size_t>(next - list.begin()) - 1;
      const latest other = top1[last].second == i ? top2[last] : top1[last];
      if (other.first > r0 && !permit_kind()) continue;  // still held by somebody else: not free
      // A semaphore has a permit free when fewer than its N others hold one.
      if (permit_kind() && permits_held_at(list, i, r0) >= permits_.at(lock)) continue;
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
  out << "    calls: " << calls_judged << " judged, worst " << std::fixed << std::setprecision(1)
      << static_cast<double>(worst) / 1e6 << " ms over the wait, " << calls_over << " over the bound\n";
  if (latencies.empty() && !control_) failures_.push_back("no hand-off judged: the liveness check proves nothing");
  return out.str();
}

}  // namespace torture_run
