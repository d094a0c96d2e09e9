#include "scenario.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cpu_time.hpp"
#include "pacer.hpp"
#include "records.hpp"

namespace warden_bench {

namespace {

// Where a worker is, so a run that does not finish can say which call hangs.
enum worker_phase : int {
  phase_waiting_for_start,
  phase_locking,    // inside lock()
  phase_inside,     // holding the lock, between lock() and unlock()
  phase_unlocking,  // inside unlock()
  phase_between,    // between unlock() and the next lock()
  phase_done,
};

const char* describe(int phase) {
  switch (phase) {
    case phase_waiting_for_start:
      return "has not started";
    case phase_locking:
      return "is inside lock()";
    case phase_inside:
      return "holds the lock (between lock() and unlock())";
    case phase_unlocking:
      return "is inside unlock()";
    case phase_between:
      return "is between unlock() and the next lock()";
    case phase_done:
      return "has finished";
  }
  return "is in an unknown state";
}

// One per lock, each on its own cache line: workers of S3 hitting different
// locks should not slow each other down through false sharing.
struct alignas(64) occupied_flag {
  std::atomic<bool> value{false};
  std::atomic<unsigned> holders{0};  // a semaphore's: how many are inside
};

// Everything one worker writes. Only that worker touches it until it has been
// joined, except `phase` and `acquisitions`, which the main thread reads to
// diagnose a hang; the alignment keeps those stores off other workers' cache
// lines.
struct alignas(64) worker_state {
  std::uint16_t index = 0;
  std::atomic<int> phase{phase_waiting_for_start};
  // records.size(), published for the hang report, which must not read the
  // buffer itself while the worker may still be appending to it.
  std::atomic<std::uint64_t> acquisitions{0};
  record_buffer records;
  std::uint64_t flag_violations = 0;
  std::uint64_t lock_errors = 0;
  std::uint64_t unlock_errors = 0;
  std::uint64_t skipped_ticks = 0;
  std::string first_error;
  std::thread thread;
};

struct shared_state {
  std::mutex mutex;
  std::condition_variable changed;  // go became true, or a worker finished
  bool go = false;
  unsigned finished = 0;
  std::atomic<bool> stop{false};
  std::vector<bench_lock> locks;
  std::unique_ptr<occupied_flag[]> occupied;
  std::chrono::nanoseconds pace{0};
  unsigned permits = 0;  // scenario_spec::permits
};

void note_error(worker_state& w, const char* call, const std::exception& e) {
  if (w.first_error.empty()) w.first_error = fmt::format("worker {} {}: {}", w.index, call, e.what());
}

void worker_main(shared_state& s, worker_state& w) {
  {
    std::unique_lock<std::mutex> guard(s.mutex);
    s.changed.wait(guard, [&] { return s.go; });
  }
  const std::size_t lock_count = s.locks.size();
  std::optional<pacer> ticks;
  if (s.pace > std::chrono::nanoseconds::zero()) ticks.emplace(pacer::clock::now(), s.pace);
  std::uint64_t k = 0;
  while (!s.stop.load(std::memory_order_relaxed)) {
    if (ticks) {
      ticks->wait();
      // The window may have closed during the sleep.
      if (s.stop.load(std::memory_order_relaxed)) break;
    }
    const auto index = static_cast<std::uint32_t>((w.index + k) % lock_count);
    ++k;
    bench_lock& lock = s.locks[index];
    std::atomic<bool>& occupied = s.occupied[index].value;
    std::atomic<unsigned>& holders = s.occupied[index].holders;

    record r{};
    r.lock = index;
    r.worker = w.index;
    w.phase.store(phase_locking, std::memory_order_relaxed);
    r.t_acq_start = now_ns();
    try {
      lock.lock();
    } catch (const std::exception& e) {
      ++w.lock_errors;
      note_error(w, "lock()", e);
      w.phase.store(phase_between, std::memory_order_relaxed);
      // A failing server fails fast; without a pause the loop would only
      // flood the log with the same error.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    r.t_enter = now_ns();
    w.phase.store(phase_inside, std::memory_order_relaxed);
    // The critical section is empty on purpose (the scenarios measure the lock
    // itself). Finding the flag already set on entry, or already cleared on
    // exit, means another thread held the same lock at the same time.
    // A semaphore's: finding all N permits' holders already inside.
    if (s.permits > 0) {
      if (holders.fetch_add(1, std::memory_order_acq_rel) >= s.permits) ++w.flag_violations;
      if (holders.fetch_sub(1, std::memory_order_acq_rel) == 0) ++w.flag_violations;
    } else {
      if (occupied.exchange(true, std::memory_order_acq_rel)) ++w.flag_violations;
      if (!occupied.exchange(false, std::memory_order_acq_rel)) ++w.flag_violations;
    }
    r.t_exit = now_ns();
    w.phase.store(phase_unlocking, std::memory_order_relaxed);
    try {
      lock.unlock();
    } catch (const std::exception& e) {
      ++w.unlock_errors;
      r.unlock_failed = 1;
      note_error(w, "unlock()", e);
    }
    r.t_rel_done = now_ns();
    w.phase.store(phase_between, std::memory_order_relaxed);
    // Outside every timed interval: a chunk allocation here delays the next
    // pair but is measured by none.
    w.records.push(r);
    w.acquisitions.store(w.acquisitions.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  if (ticks) w.skipped_ticks = ticks->skipped();
  w.phase.store(phase_done, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard(s.mutex);
    ++s.finished;
  }
  s.changed.notify_all();
}

void report_hang(const scenario_spec& spec, const std::vector<std::unique_ptr<worker_state>>& workers, double grace_s) {
  fmt::print(stderr, "\nwarden-bench: HANG in {}: workers still running {:.0f} s after the stop signal\n", spec.name,
             grace_s);
  for (const auto& w : workers) {
    const int phase = w->phase.load(std::memory_order_relaxed);
    if (phase == phase_done) continue;
    fmt::print(stderr, "  worker {} {} (acquisitions so far: {})\n", w->index, describe(phase),
               w->acquisitions.load(std::memory_order_relaxed));
  }
  std::fflush(stderr);
}

void write_records(std::FILE* out, const scenario_spec& spec,
                   const std::vector<std::unique_ptr<worker_state>>& workers) {
  fmt::memory_buffer buffer;
  for (const auto& w : workers) {
    w->records.for_each([&](const record& r) {
      fmt::format_to(std::back_inserter(buffer), "{},{},{},{},{}:{},{}\n", r.t_acq_start, r.t_enter, r.t_exit,
                     r.t_rel_done, spec.name, r.lock, r.worker);
      if (buffer.size() > (1u << 20)) {
        std::fwrite(buffer.data(), 1, buffer.size(), out);
        buffer.clear();
      }
    });
  }
  std::fwrite(buffer.data(), 1, buffer.size(), out);
  std::fflush(out);
}

// A semaphore's successions, in permits. A holder's t_exit is taken right
// before its release() starts; the permits are alike, so each acquisition
// (at its t_enter) is given the permit that has been free the longest (the
// N initial ones first): the gap from that release's start to the new
// holder's return is its hand-off, the pessimistic pairing. "Waiting" gaps
// are those where the new holder was already inside acquire() when that
// release started. Timestamp overlaps: an acquisition returning while N
// others were between their return and their release's start.
void analyze_permits(std::vector<record>& all, unsigned permits, scenario_result& result,
                     std::vector<std::int64_t>& handoff_gap, std::vector<std::int64_t>& handoff_gap_waiting) {
  struct event {
    std::int64_t at;
    bool release;  // else an acquisition's return
    const record* r;
  };
  std::size_t begin = 0;
  while (begin < all.size()) {
    std::size_t end = begin;
    while (end < all.size() && all[end].lock == all[begin].lock) ++end;
    std::vector<event> events;
    for (std::size_t i = begin; i < end; ++i) {
      events.push_back({all[i].t_enter, false, &all[i]});
      events.push_back({all[i].t_exit, true, &all[i]});
    }
    // At one instant a release comes before a return.
    std::sort(events.begin(), events.end(),
              [](const event& a, const event& b) { return a.at != b.at ? a.at < b.at : a.release > b.release; });
    std::deque<const record*> free;  // released permits, oldest first (nullptr: an initial one)
    for (unsigned i = 0; i < permits; ++i) free.push_back(nullptr);
    long inside = 0;
    for (const event& e : events) {
      if (e.release) {
        --inside;
        // A failed release may have given nothing back: no permit to hand on.
        if (!e.r->unlock_failed) free.push_back(e.r);
        continue;
      }
      if (++inside > static_cast<long>(permits)) ++result.timestamp_overlaps;
      if (free.empty()) continue;  // counted above: more than N inside
      const record* from = free.front();
      free.pop_front();
      if (from == nullptr) continue;
      ++result.successions;
      if (from->worker == e.r->worker) continue;
      ++result.owner_changes;
      const std::int64_t gap = e.r->t_enter - from->t_exit;
      handoff_gap.push_back(gap);
      if (e.r->t_acq_start <= from->t_exit) handoff_gap_waiting.push_back(gap);
    }
    begin = end;
  }
}

void analyze(const std::vector<std::unique_ptr<worker_state>>& workers, std::int64_t t_stop, scenario_result& result) {
  std::vector<record> all;
  std::size_t total = 0;
  for (const auto& w : workers) total += w->records.size();
  all.reserve(total);
  for (const auto& w : workers) w->records.for_each([&](const record& r) { all.push_back(r); });

  std::vector<std::int64_t> pair_latency, acquisition_wait, handoff_gap, handoff_gap_waiting;
  pair_latency.reserve(all.size());
  acquisition_wait.reserve(all.size());
  for (const record& r : all) {
    acquisition_wait.push_back(r.t_enter - r.t_acq_start);
    if (r.unlock_failed) continue;
    pair_latency.push_back(r.t_rel_done - r.t_acq_start);
    if (r.t_rel_done <= t_stop) ++result.pairs_in_window;
  }
  result.acquisitions = all.size();

  // In the order each lock was taken. Entry times order the holders of one
  // lock as long as mutual exclusion holds; where it does not, the overlap
  // check below says so.
  std::sort(all.begin(), all.end(), [](const record& a, const record& b) {
    return a.lock != b.lock ? a.lock < b.lock : a.t_enter < b.t_enter;
  });
  if (result.spec.permits > 0) analyze_permits(all, result.spec.permits, result, handoff_gap, handoff_gap_waiting);
  for (std::size_t i = 1; i < all.size() && result.spec.permits == 0; ++i) {
    const record& prev = all[i - 1];
    const record& cur = all[i];
    if (cur.lock != prev.lock) continue;
    ++result.successions;
    // The previous holder was still inside its critical section when this
    // one's lock() returned.
    if (cur.t_enter < prev.t_exit) ++result.timestamp_overlaps;
    if (cur.worker == prev.worker) continue;
    ++result.owner_changes;
    const std::int64_t gap = cur.t_enter - prev.t_exit;
    handoff_gap.push_back(gap);
    // The next owner was already waiting, so the gap is pure hand-off time and
    // contains no stretch where nobody wanted the lock.
    if (cur.t_acq_start <= prev.t_exit) handoff_gap_waiting.push_back(gap);
  }

  result.pair_latency = summarize(std::move(pair_latency));
  result.acquisition_wait = summarize(std::move(acquisition_wait));
  result.handoff_gap = summarize(std::move(handoff_gap));
  result.handoff_gap_waiting = summarize(std::move(handoff_gap_waiting));

  result.per_thread_min = UINT64_MAX;
  for (const auto& w : workers) {
    const std::uint64_t n = w->records.size();
    result.per_thread_min = std::min(result.per_thread_min, n);
    result.per_thread_max = std::max(result.per_thread_max, n);
    result.flag_violations += w->flag_violations;
    result.lock_errors += w->lock_errors;
    result.unlock_errors += w->unlock_errors;
    result.skipped_ticks += w->skipped_ticks;
    if (result.first_error.empty()) result.first_error = w->first_error;
  }
  if (workers.empty()) result.per_thread_min = 0;
}

}  // namespace

void write_records_header(std::FILE* out) {
  std::fputs("t_acq_start_ns,t_enter_ns,t_exit_ns,t_rel_done_ns,lock,worker\n", out);
}

scenario_result run_scenario(warden::Client& client, const scenario_spec& spec, const run_settings& settings) {
  shared_state s;
  s.locks.reserve(spec.locks);
  for (unsigned i = 0; i < spec.locks; ++i) {
    const std::string name =
        spec.lock_names.empty() ? fmt::format("{}{}:{}", settings.key_prefix, spec.name, i) : spec.lock_names.at(i);
    s.locks.push_back(spec.make_lock(client, name));
  }
  s.occupied = std::make_unique<occupied_flag[]>(spec.locks);
  s.pace = spec.pace;
  s.permits = spec.permits;

  // Record buffers are allocated here, before the clock starts.
  std::vector<std::unique_ptr<worker_state>> workers;
  for (unsigned i = 0; i < spec.threads; ++i) {
    workers.push_back(std::make_unique<worker_state>());
    workers.back()->index = static_cast<std::uint16_t>(i);
  }
  for (auto& w : workers) w->thread = std::thread(worker_main, std::ref(s), std::ref(*w));

  auto server_cpu = [&] { return settings.server_cpu_s ? settings.server_cpu_s() : -1.0; };
  auto commands = [&] {
    return settings.server_commands ? settings.server_commands() : std::map<std::string, std::uint64_t>{};
  };
  const auto commands_start = commands();
  const double server_cpu_start = server_cpu();
  const double client_cpu_start = process_cpu_s();
  const auto switches_start = process_switches();
  std::int64_t t_start = 0;
  {
    std::lock_guard<std::mutex> guard(s.mutex);
    t_start = now_ns();
    s.go = true;
  }
  s.changed.notify_all();
  const auto window = std::chrono::nanoseconds(static_cast<std::int64_t>(settings.duration_s * 1e9));
  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t_start)) + window);
  const std::int64_t t_stop = now_ns();
  s.stop.store(true, std::memory_order_relaxed);
  const double client_cpu_stop = process_cpu_s();
  const auto switches_stop = process_switches();
  const double server_cpu_stop = server_cpu();
  const auto commands_stop = commands();

  {
    std::unique_lock<std::mutex> guard(s.mutex);
    const auto grace = std::chrono::duration<double>(settings.hang_grace_s);
    if (!s.changed.wait_for(guard, grace, [&] { return s.finished == spec.threads; })) {
      guard.unlock();
      report_hang(spec, workers, settings.hang_grace_s);
      // The stuck threads cannot be joined, and destroying a joinable
      // std::thread terminates; the caller ends the process instead.
      if (settings.on_hang) settings.on_hang();
      std::abort();
    }
  }
  for (auto& w : workers) w->thread.join();

  scenario_result result;
  result.spec = spec;
  result.window_s = static_cast<double>(t_stop - t_start) / 1e9;
  analyze(workers, t_stop, result);  // reads result.spec
  if (client_cpu_start >= 0 && client_cpu_stop >= 0) result.client_cpu_s = client_cpu_stop - client_cpu_start;
  result.client_switches = switches_stop - switches_start;
  if (server_cpu_start >= 0 && server_cpu_stop >= 0) result.server_cpu_s = server_cpu_stop - server_cpu_start;
  if (!commands_start.empty() && !commands_stop.empty()) {
    result.commands_known = true;
    for (auto& [name, calls] : commands_stop) {
      if (name == "info") continue;  // the bench's own sampling
      auto before = commands_start.find(name);
      std::uint64_t delta = calls - (before == commands_start.end() ? 0 : before->second);
      if (delta > 0) result.server_commands[name] = delta;
    }
  }
  result.pairs_per_s = result.window_s > 0 ? static_cast<double>(result.pairs_in_window) / result.window_s : 0;
  if (settings.records != nullptr) write_records(settings.records, spec, workers);
  return result;
}

}  // namespace warden_bench
