// warden-bench --waiters N: N async waiters parked on N held locks, all
// released at once. See print_usage() in options.cpp.
#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include <warden/client.hpp>

#include "cpu_time.hpp"
#include "records.hpp"
#include "scale.hpp"
#include "scale_watch.hpp"
#include "wake_floor.hpp"

namespace warden_bench {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t max_outstanding = 1'000;
constexpr std::chrono::seconds park_timeout = 120s;
constexpr std::chrono::seconds wake_timeout = 120s;
// Parked: no waiter script for this long (and every channel subscribed).
constexpr std::chrono::milliseconds quiet_for = 500ms;
constexpr int churn_pairs = 300;
// The server's floor: read this many times, the first ones before the
// cycles and the rest after them.
constexpr int floor_runs = 5;
constexpr int floor_runs_before = 2;
// After the wake: how long the waiters' subscriptions may take to go.
constexpr std::chrono::seconds channels_gone_timeout = 10s;

// The waiters' completions, written on the measured Client's I/O thread into
// storage taken before the first heap reading.
struct wake_book {
  explicit wake_book(std::size_t n) : done_ns(n, 0), released_ns(n, 0), failed(n, 0) {}
  // Ready for another cycle, in the storage it has.
  void reset() {
    std::fill(done_ns.begin(), done_ns.end(), 0);
    std::fill(released_ns.begin(), released_ns.end(), 0);
    std::fill(failed.begin(), failed.end(), 0);
    completed.store(0);
    errors.reset();
  }
  std::vector<std::int64_t> done_ns;
  std::vector<std::int64_t> released_ns;  // when each holder release was answered (holder's I/O thread)
  std::vector<char> failed;
  std::atomic<std::size_t> completed{0};
  error_tally errors;
};

// What stays the same over both cycles: the measured Client and the bench's
// storage, all made before the baseline reading.
struct waiters_run {
  const warden::Config& client_config;
  const waiters_settings& settings;
  server_stats& stats;
  warden::Lock& churn_lock;
  warden::Client& client;
  wake_book& book;
  std::vector<warden::thread_id>& owners;
};

// One park → wake → release → drop cycle on its own N names (`names`: their
// prefix). Fills `r` from the "before" reading on, through "after".
void run_cycle(waiters_run& run, const std::string& names, waiters_result& r, std::vector<std::string>& notes);

}  // namespace

waiters_result run_waiters(const warden::Config& client_config, const warden::Config& server,
                           const waiters_settings& settings, std::vector<std::string>& notes) {
  waiters_result r;
  const std::size_t n = settings.waiters;
  r.waiters = n;
  r.lease = settings.lease;

  server_stats stats(server);
  auto watch = std::make_shared<client_watch>(10'000);
  warden::Config config = client_config;
  config.lock_watchdog_timeout = settings.lease;
  watch->install(config);
  warden::Client client{config};
  warden::Lock churn_lock = client.get_lock(settings.key_prefix + "waiters-churn");
  for (int i = 0; i < 50; ++i) {
    churn_lock.lock();
    churn_lock.unlock();
  }

  // Bench-side storage first, then the baseline reading.
  auto book = std::make_unique<wake_book>(n);
  std::vector<warden::thread_id> owners(n);
  for (auto& o : owners) o = warden::new_owner_id();
  waiters_run run{client_config, settings, stats, churn_lock, client, *book, owners};
  // The server's floor, before the cycles (and again after them): it varies
  // with what else the machine runs, so the wake is compared with the median
  // of several readings around it. Before the baseline reading, as the
  // floor's own connections use this process's heap.
  int floor_run = 0;
  auto measure_floor = [&] {
    ++floor_run;
    fmt::print(stderr,
               "waiters: the server's floor ({}/{}), {} releases and acquires pipelined on a plain connection...\n",
               floor_run, floor_runs, n);
    // No latch of the bench's earlier work expires during it (nor after
    // it, during the cycles): the readings are alike.
    r.latches_dropped += drop_unlock_latches(server, settings.key_prefix);
    r.floors.runs.push_back(measure_wake_floor(server, settings.key_prefix, n, "publish", floor_run));
    r.latches_dropped += drop_unlock_latches(server, settings.key_prefix);
  };
  for (int i = 0; i < floor_runs_before; ++i) measure_floor();
  r.baseline = settled_memory(3, 100ms);

  // The cycle twice, on two sets of N names: what warden keeps per name
  // grows again with the second set, while a bounded cache of the allocator
  // (glibc's per-thread tcache, an arena's free chunks) is as full after one
  // cycle as after the other. The growth between the two ends is the figure
  // judged; the first end against the baseline is shown as well.
  // Names of one length in both (as before: "waiters:<i>"), so that each
  // cycle's heap figures are alike.
  run_cycle(run, settings.key_prefix + "waiters:", r, notes);
  {
    waiters_result second;
    second.waiters = n;
    second.lease = settings.lease;
    book->reset();
    run_cycle(run, settings.key_prefix + "waiter2:", second, notes);
    r.second_before = second.before;
    r.second_parked = second.parked_memory;
    r.after_second = second.after;
    r.second_acquired = second.acquired;
    r.second_wake = second.wake;
    r.second_errors = second.waiter_errors + second.holder_release_errors + second.unlock_errors + second.holds_lost;
    if (!second.first_waiter_error.empty()) {
      notes.push_back("waiters, second cycle: first error: " + second.first_waiter_error);
    }
  }
  r.holds_lost += watch->holds_lost();
  for (auto& line : watch->log_note()) notes.push_back("measured Client: " + line);
  // The rest of the floor's readings, after every heap reading.
  while (floor_run < floor_runs) measure_floor();
  return r;
}

namespace {

void run_cycle(waiters_run& run, const std::string& names, waiters_result& r, std::vector<std::string>& notes) {
  const waiters_settings& settings = run.settings;
  const warden::Config& client_config = run.client_config;
  server_stats& stats = run.stats;
  warden::Client& client = run.client;
  wake_book* book = &run.book;
  std::vector<warden::thread_id>& owners = run.owners;
  const std::size_t n = settings.waiters;
  auto name_of = [&](std::size_t i) { return fmt::format("{}{}", names, i); };
  std::vector<warden::Lock> waiters;
  std::vector<warden::Lock> held;

  // The holder: a Client of its own (watchdog mode, one owner), destroyed
  // before the leftover reading so that the heap then holds only what the
  // measured Client kept.
  auto holder_watch = std::make_shared<client_watch>(1'000);  // its sent count is what is used
  // Its Config (whose hooks hold holder_watch) lives only in the holder
  // Client, so that it goes with it before the leftover reading.
  auto holder = [&] {
    warden::Config holder_config = client_config;
    holder_config.lock_watchdog_timeout = settings.lease;
    holder_watch->install(holder_config);
    return std::make_unique<warden::Client>(std::move(holder_config));
  }();
  const warden::thread_id holder_owner = warden::new_owner_id();
  held.reserve(n);
  fmt::print(stderr, "waiters: a holder Client takes {} locks...\n", n);
  {
    async_gate gate(max_outstanding);
    error_tally errors;
    const std::int64_t t0 = now_ns();
    for (std::size_t i = 0; i < n; ++i) {
      gate.enter();
      held.push_back(holder->get_lock(name_of(i)));
      held.back().lock_async(holder_owner, {}, [&gate, &errors, i](std::error_code e) {
        if (e) errors.add(e, fmt::format("waiters:{}", i));
        gate.leave();
      });
    }
    if (!gate.drain(std::chrono::minutes(10)))
      throw std::runtime_error("waiters: holder acquires outstanding after 10 min");
    r.holder_acquire_s = seconds_between(t0, now_ns());
    r.holder_errors = errors.count();
    r.first_holder_error = errors.first();
  }
  if (r.holder_errors != 0)
    throw std::runtime_error("waiters: the holder could not take its locks: " + r.first_holder_error);

  // The waiters, one per lock, each its own owner.
  r.before = settled_memory(3, 100ms);
  waiters.reserve(n);
  const std::int64_t channels0 = stats.info_integer("stats", "pubsub_channels");
  const std::uint64_t scripts0 = stats.script_calls();
  const std::uint64_t holder_sent0 = holder_watch->sent_batches();
  fmt::print(stderr, "waiters: {} waiters call lock_async...\n", n);
  const std::int64_t park0 = now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    waiters.push_back(client.get_lock(name_of(i)));
    waiters.back().lock_async(owners[i], {}, [b = book, i](std::error_code e) {
      b->done_ns[i] = now_ns();
      if (e) {
        b->failed[i] = 1;
        b->errors.add(e, fmt::format("waiters:{}", i));
      }
      b->completed.fetch_add(1, std::memory_order_release);
    });
  }
  // Parked: every waiter's channel has a subscriber (INFO stats
  // pubsub_channels; nothing else of this run subscribes), and the server has
  // run no waiter script for quiet_for (script calls less the holder's
  // renewal batches, which its own observer counts). warden has no public
  // "waiting" event to count instead.
  {
    std::uint64_t last = 0;
    std::int64_t last_change = now_ns();
    const std::int64_t deadline = park0 + std::chrono::nanoseconds(park_timeout).count();
    while (now_ns() < deadline) {
      std::this_thread::sleep_for(50ms);
      const std::uint64_t scripts = stats.script_calls() - scripts0 - (holder_watch->sent_batches() - holder_sent0);
      const std::int64_t channels = stats.info_integer("stats", "pubsub_channels") - channels0;
      if (scripts != last) {
        last = scripts;
        last_change = now_ns();
      }
      if (channels >= static_cast<std::int64_t>(n) &&
          now_ns() - last_change >= std::chrono::nanoseconds(quiet_for).count()) {
        r.parked = true;
        r.channels = channels;
        r.scripts_to_park = scripts;
        r.park_s = seconds_between(park0, last_change);
        break;
      }
      r.channels = channels;
      r.scripts_to_park = scripts;
    }
    if (!r.parked) r.park_s = seconds_between(park0, now_ns());
  }
  r.parked_memory = settled_memory(3, 100ms);

  // Release all at once: every unlock_async of the holder back to back.
  fmt::print(stderr, "waiters: the holder releases all {} at once...\n", n);
  error_tally release_errors;
  std::atomic<std::size_t> released{0};
  std::vector<std::int64_t>& released_ns = book->released_ns;
  const auto calls0 = stats.command_calls();
  const double client_cpu0 = process_cpu_s();
  const std::int64_t expired0 = stats.info_integer("stats", "expired_keys");
  const double server_cpu0 = stats.cpu_s();
  const std::int64_t t0 = now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    held[i].unlock_async(holder_owner, [&release_errors, &released, &released_ns, i](std::error_code e) {
      if (e) release_errors.add(e, "holder release");
      released_ns[i] = now_ns();
      released.fetch_add(1, std::memory_order_release);
    });
  }
  r.release_issue_s = seconds_between(t0, now_ns());
  const std::int64_t wake_deadline = t0 + std::chrono::nanoseconds(wake_timeout).count();
  while (book->completed.load(std::memory_order_acquire) < n && now_ns() < wake_deadline) {
    std::this_thread::sleep_for(1ms);
  }
  r.all_done = book->completed.load(std::memory_order_acquire) == n;
  r.wake_server_cpu_s = stats.cpu_s() - server_cpu0;
  r.wake_client_cpu_s = process_cpu_s() - client_cpu0;
  const auto calls1 = stats.command_calls();
  r.wake_commands = command_delta(calls0, calls1);
  r.wake_expired_keys = stats.info_integer("stats", "expired_keys") - expired0;
  // Served waiters keep no subscription for long: their channels go.
  {
    const std::int64_t gone0 = now_ns();
    const std::int64_t deadline = gone0 + std::chrono::nanoseconds(channels_gone_timeout).count();
    while (now_ns() < deadline) {
      if (stats.info_integer("stats", "pubsub_channels") <= channels0) {
        r.channels_gone_s = seconds_between(gone0, now_ns());
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    r.tail_commands = command_delta(calls1, stats.command_calls());
  }
  while (released.load(std::memory_order_acquire) < n && now_ns() < wake_deadline) std::this_thread::sleep_for(1ms);
  r.holder_release_errors = release_errors.count();
  {
    std::vector<std::int64_t> wake;
    std::vector<std::int64_t> after_release;
    std::int64_t last = t0;
    for (std::size_t i = 0; i < n; ++i) {
      if (book->done_ns[i] == 0) continue;
      last = std::max(last, book->done_ns[i]);
      if (!book->failed[i]) {
        ++r.acquired;
        wake.push_back(book->done_ns[i] - t0);
        // The two clocks are one (steady_clock); a waiter may even finish
        // before the holder's thread has handled its release's answer.
        if (released_ns[i] != 0) after_release.push_back(std::max<std::int64_t>(book->done_ns[i] - released_ns[i], 0));
      }
    }
    r.wake = summarize_latency(std::move(wake));
    r.wake_after_release = summarize_latency(std::move(after_release));
    r.total_s = seconds_between(t0, last);
    r.waiter_errors = book->errors.count();
    r.first_waiter_error = book->errors.first();
  }
  if (!r.all_done) {
    notes.push_back(fmt::format("waiters: {} of {} waiters had not completed {} s after the release",
                                n - book->completed.load(), n, wake_timeout.count()));
  }

  // Everything goes: the waiters release, the handles are dropped, the
  // holder Client is destroyed; then the measured Client's leftovers.
  {
    async_gate gate(max_outstanding);
    error_tally errors;
    const std::int64_t u0 = now_ns();
    for (std::size_t i = 0; i < n; ++i) {
      if (book->done_ns[i] == 0 || book->failed[i]) continue;
      gate.enter();
      waiters[i].unlock_async(owners[i], [&gate, &errors](std::error_code e) {
        if (e) errors.add(e, "waiter release");
        gate.leave();
      });
    }
    if (!gate.drain(std::chrono::minutes(10))) throw std::runtime_error("waiters: releases outstanding after 10 min");
    r.unlock_s = seconds_between(u0, now_ns());
    r.unlock_errors = errors.count();
  }
  waiters.clear();
  waiters.shrink_to_fit();
  held.clear();
  held.shrink_to_fit();
  r.holder_gone_before = sample_memory();
  holder.reset();
  r.holder_gone_after = sample_memory();
  r.holds_lost = holder_watch->holds_lost();
  for (auto& line : holder_watch->log_note()) notes.push_back("holder Client: " + line);
  // Its renewal log is bench storage taken after the baseline reading.
  holder_watch.reset();
  std::this_thread::sleep_for(2s);
  for (int i = 0; i < churn_pairs; ++i) {
    run.churn_lock.lock();
    run.churn_lock.unlock();
  }
  r.after = settled_memory(3, 100ms);
}

}  // namespace

}  // namespace warden_bench
