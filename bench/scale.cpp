// warden-bench --scale H: see print_usage() in options.cpp for the phases.
#include "scale.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include <warden/client.hpp>
#include <warden/observer.hpp>

#include "cpu_time.hpp"
#include "records.hpp"
#include "scale_probes.hpp"
#include "scale_watch.hpp"

namespace warden_bench {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds probe_pace = 2ms;
constexpr std::chrono::seconds baseline_length = 3s;
constexpr std::size_t pttl_keys = 200;
constexpr std::chrono::milliseconds pttl_every = 100ms;
constexpr int churn_pairs = 300;

// Where to cut the hold phase into windows: renewals of a watchdog that
// sends them in a burst once a period must not be split by a window edge, so
// the edges go in the middle of the longest quiet stretch of one observed
// period (for a watchdog that spreads them, any place is as good). Returns
// the offset from `from` of the edge, in [0, period).
std::int64_t quiet_offset(const std::vector<std::int64_t>& sent, std::int64_t from, std::int64_t period) {
  if (sent.empty()) return 0;
  std::vector<std::int64_t> phase;
  phase.reserve(sent.size());
  for (auto t : sent) phase.push_back(((t - from) % period + period) % period);
  std::sort(phase.begin(), phase.end());
  std::int64_t best_gap = phase.front() + period - phase.back(), best_start = phase.back();
  for (std::size_t i = 1; i < phase.size(); ++i) {
    if (phase[i] - phase[i - 1] > best_gap) {
      best_gap = phase[i] - phase[i - 1];
      best_start = phase[i - 1];
    }
  }
  return (best_start + best_gap / 2) % period;
}

period_figures window_figures(const std::vector<renewal_record>& events, const std::vector<probe_sample>& probe,
                              std::int64_t from, std::int64_t to) {
  period_figures w;
  std::vector<std::int64_t> sent_at, latency, probe_latency;
  for (const auto& e : events) {
    if (e.t_ns < from || e.t_ns >= to) continue;
    switch (e.phase) {
      case warden::renewal_phase::sent:
        ++w.batches_sent;
        w.holds_sent += e.count;
        sent_at.push_back(e.t_ns);
        break;
      case warden::renewal_phase::confirmed:
        w.renewed += e.renewed;
        w.gone += e.gone;
        latency.push_back(e.latency_ns);
        break;
      case warden::renewal_phase::failed:
        ++w.failed;
        break;
    }
  }
  std::sort(sent_at.begin(), sent_at.end());
  if (!sent_at.empty()) {
    w.sent_span_ns = sent_at.back() - sent_at.front();
    std::size_t first = 0;
    for (std::size_t i = 0; i < sent_at.size(); ++i) {
      if (i > 0) w.largest_gap_ns = std::max(w.largest_gap_ns, sent_at[i] - sent_at[i - 1]);
      while (sent_at[i] - sent_at[first] >= 10'000'000) ++first;
      w.most_in_10ms = std::max(w.most_in_10ms, i - first + 1);
    }
  }
  w.batch_latency = summarize_latency(std::move(latency));
  for (const auto& p : probe) {
    if (p.start_ns >= from && p.start_ns < to) probe_latency.push_back(p.latency_ns);
  }
  w.probe_pairs = probe_latency.size();
  w.probe = summarize_latency(std::move(probe_latency));
  return w;
}

std::vector<std::int64_t> probe_latencies(const std::vector<probe_sample>& samples, std::int64_t from,
                                          std::int64_t to) {
  std::vector<std::int64_t> out;
  for (const auto& s : samples) {
    if (s.start_ns >= from && s.start_ns < to) out.push_back(s.latency_ns);
  }
  return out;
}

}  // namespace

scale_result run_scale(const warden::Config& client_config, const warden::Config& server,
                       const scale_settings& settings, std::vector<std::string>& notes) {
  scale_result r;
  r.holds = settings.holds;
  r.periods = settings.periods;
  r.lease = settings.lease;
  r.period = settings.lease / 3;
  // Holds per renewal script: the Client's own setting (default 100), or --batch.
  const auto renewal_batch = static_cast<std::size_t>(settings.batch.value_or(client_config.lock_watchdog_batch_size));
  r.batch = renewal_batch;
  r.max_outstanding = settings.in_flight;
  r.owner_note = "one owner (a single new_owner_id()) holds every lock";
  const std::size_t h = settings.holds;
  const std::int64_t period_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(r.period).count();
  auto name_of = [&](std::size_t i) { return fmt::format("{}scale:{}", settings.key_prefix, i); };

  // Everything the bench itself keeps is allocated before the first heap
  // reading, so the deltas are warden's: the renewal log (generous: the
  // acquire and release phases renew too), the probe's samples, the sampler's
  // names and connection, the INFO connection.
  const std::size_t batches_per_period = (h + renewal_batch - 1) / renewal_batch;
  auto watch = std::make_shared<client_watch>(2 * batches_per_period * (settings.periods + 120) + 100'000);
  warden::Config config = client_config;
  config.lock_watchdog_timeout = settings.lease;
  config.lock_watchdog_batch_size = static_cast<int>(renewal_batch);
  watch->install(config);
  warden::Client client{config};

  server_stats stats(server);
  warden::Lock probe_lock = client.get_lock(settings.key_prefix + "probe");
  const auto probe_capacity =
      static_cast<std::size_t>((baseline_length + r.period * (settings.periods + 3)) / probe_pace + 1'000);
  latency_probe probe(probe_lock, probe_pace, probe_capacity);
  std::vector<std::string> sampled;
  for (std::size_t k = 0; k < std::min(h, pttl_keys); ++k) sampled.push_back(name_of(k * h / std::min(h, pttl_keys)));
  r.pttl_keys = sampled.size();
  pttl_sampler sampler(server, std::move(sampled), pttl_every);

  // Warm-up: connected, scripts loaded, the probe lock's first use paid.
  for (int i = 0; i < 50; ++i) {
    probe_lock.lock();
    probe_lock.unlock();
  }

  // (a) Baseline: the probe alone.
  fmt::print(stderr, "scale: baseline, the probe alone for {} s...\n", baseline_length.count());
  {
    const double cpu0 = process_cpu_s();
    const std::uint64_t scripts0 = stats.script_calls();
    const std::int64_t t0 = now_ns();
    probe.start();
    std::this_thread::sleep_for(baseline_length);
    probe.stop();
    const std::int64_t t1 = now_ns();
    const double cpu1 = process_cpu_s();
    const std::uint64_t scripts1 = stats.script_calls();
    r.baseline_s = seconds_between(t0, t1);
    r.baseline = summarize_latency(probe_latencies(probe.samples(), t0, t1));
    r.baseline_errors = probe.errors();
    if (cpu0 >= 0 && cpu1 >= 0) r.baseline_cpu_share = (cpu1 - cpu0) / r.baseline_s;
    // The INFO call itself is not a script; every script of the window is the probe's.
    r.scripts_per_probe_pair = probe.samples().empty() ? 2.0
                                                       : static_cast<double>(scripts1 - scripts0) /
                                                             static_cast<double>(probe.samples().size());
  }

  // (b) Acquire H locks, up to max_outstanding at once.
  r.before = settled_memory(3, 100ms);
  std::vector<warden::Lock> handles;
  handles.reserve(h);
  const warden::thread_id owner = warden::new_owner_id();
  fmt::print(stderr, "scale: acquiring {} locks (up to {} at once)...\n", h, settings.in_flight);
  {
    async_gate gate(settings.in_flight);
    error_tally errors;
    const std::int64_t t0 = now_ns();
    for (std::size_t i = 0; i < h; ++i) {
      gate.enter();
      handles.push_back(client.get_lock(name_of(i)));
      handles.back().lock_async(owner, {},
                                [&gate, &errors, name = std::string_view(handles.back().name())](std::error_code e) {
                                  if (e) errors.add(e, std::string(name));
                                  gate.leave();
                                });
    }
    if (!gate.drain(std::chrono::minutes(10)))
      throw std::runtime_error("scale: acquires still outstanding after 10 min");
    r.acquire_s = seconds_between(t0, now_ns());
    r.acquire_errors = errors.count();
    r.acquire_timed_out = errors.timed_out();
    r.first_acquire_error = errors.first();
  }
  // Over a whole period, so one reading falls between renewal batches.
  r.held = settled_memory(5, r.period / 5);

  // (c) Hold for N periods with the probe and the sampler running.
  fmt::print(stderr, "scale: holding {} locks for {} periods of {} ms (+1 to place the windows)...\n", h,
             settings.periods, r.period.count());
  sampler.start();
  const std::int64_t sampler_t0 = now_ns();
  probe.start();
  const std::int64_t cal0 = now_ns();
  std::this_thread::sleep_for(r.period);
  const std::int64_t cal1 = now_ns();
  std::int64_t edge = cal0 + quiet_offset(watch->sent_between(cal0, cal1), cal0, period_ns);
  while (edge < now_ns() + 5'000'000) edge += period_ns;
  r.calibration_s = seconds_between(cal0, edge);

  std::vector<std::int64_t> edges;
  std::vector<std::uint64_t> scripts_at;
  double cpu_first = -1, cpu_last = -1, server_first = -1, server_last = -1;
  for (unsigned k = 0; k <= settings.periods; ++k) {
    const std::int64_t at = edge + static_cast<std::int64_t>(k) * period_ns;
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(at)));
    edges.push_back(now_ns());
    scripts_at.push_back(stats.script_calls());
    if (k == 0) {
      cpu_first = process_cpu_s();
      server_first = stats.cpu_s();
    } else if (k == settings.periods) {
      cpu_last = process_cpu_s();
      server_last = stats.cpu_s();
    }
  }
  probe.stop();
  sampler.stop();
  const std::int64_t sampler_t1 = now_ns();
  r.held_end = settled_memory(3, r.period / 3);

  r.hold_s = seconds_between(edges.front(), edges.back());
  {
    // A copy of the log, gone before the heap is read after the release
    // (else it would count as kept per name).
    const auto events = watch->renewals();
    for (unsigned k = 0; k < settings.periods; ++k) {
      period_figures w = window_figures(events, probe.samples(), edges[k], edges[k + 1]);
      w.scripts = scripts_at[k + 1] - scripts_at[k];
      w.renewal_scripts =
          static_cast<double>(w.scripts) - static_cast<double>(w.probe_pairs) * r.scripts_per_probe_pair;
      r.windows.push_back(w);
    }
  }
  r.hold_probe = summarize_latency(probe_latencies(probe.samples(), edges.front(), edges.back()));
  r.probe_errors = probe.errors();
  r.first_probe_error = probe.first_error();
  if (cpu_first >= 0 && cpu_last >= 0) r.client_cpu_share = (cpu_last - cpu_first) / r.hold_s;
  r.sampler_cpu_share = sampler.thread_cpu_s() / seconds_between(sampler_t0, sampler_t1);
  if (!std::isnan(r.client_cpu_share) && !std::isnan(r.baseline_cpu_share)) {
    r.renewal_cpu_share = r.client_cpu_share - r.baseline_cpu_share - r.sampler_cpu_share;
  }
  if (server_first >= 0 && server_last >= 0) r.server_cpu_share = (server_last - server_first) / r.hold_s;
  r.min_pttl_ms = sampler.min_pttl_ms();
  r.pttl_rounds = sampler.rounds();
  r.pttl_missing = sampler.missing();
  r.pttl_no_expiry = sampler.no_expiry();
  r.pttl_error = sampler.error();

  // (d) Quiet: whole periods with nothing but the watchdog at work, cut where
  // no renewal is being sent, so the CPU read is the renewals' own.
  r.quiet_periods = 2;
  fmt::print(stderr, "scale: {} quiet periods (renewals only)...\n", r.quiet_periods);
  {
    std::int64_t at = edges.back();
    while (at < now_ns() + 5'000'000) at += period_ns;
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(at)));
    const std::int64_t q0 = now_ns();
    const double cpu0 = process_cpu_s();
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(at + static_cast<std::int64_t>(r.quiet_periods) * period_ns)));
    const double cpu1 = process_cpu_s();
    const std::int64_t q1 = now_ns();
    r.quiet_s = seconds_between(q0, q1);
    if (cpu0 >= 0 && cpu1 >= 0) r.quiet_cpu_share = (cpu1 - cpu0) / r.quiet_s;
    for (const auto& e : watch->renewals()) {
      if (e.phase == warden::renewal_phase::sent && e.t_ns >= q0 && e.t_ns < q1) r.quiet_renewals += e.count;
    }
  }

  // Release everything, drop the handles, let the client's bookkeeping go.
  fmt::print(stderr, "scale: releasing {} locks...\n", h);
  {
    async_gate gate(settings.in_flight);
    error_tally errors;
    const double cpu0 = process_cpu_s();
    const std::int64_t t0 = now_ns();
    for (auto& lock : handles) {
      gate.enter();
      lock.unlock_async(owner, [&gate, &errors, name = std::string_view(lock.name())](std::error_code e) {
        if (e) errors.add(e, std::string(name));
        gate.leave();
      });
    }
    if (!gate.drain(std::chrono::minutes(10)))
      throw std::runtime_error("scale: releases still outstanding after 10 min");
    r.release_s = seconds_between(t0, now_ns());
    const double cpu1 = process_cpu_s();
    if (cpu0 >= 0 && cpu1 >= 0) r.release_cpu_s = cpu1 - cpu0;
    r.release_errors = errors.count();
    r.release_timed_out = errors.timed_out();
    r.first_release_error = errors.first();
  }
  handles.clear();
  handles.shrink_to_fit();
  r.holds_lost = watch->holds_lost();
  r.first_lost = watch->first_lost();
  std::this_thread::sleep_for(2s);
  for (int i = 0; i < churn_pairs; ++i) {
    probe_lock.lock();
    probe_lock.unlock();
  }
  r.after = settled_memory(3, 100ms);
  r.renewal_events_dropped = watch->dropped();
  for (auto& line : watch->log_note()) notes.push_back(std::move(line));
  return r;
}

}  // namespace warden_bench
