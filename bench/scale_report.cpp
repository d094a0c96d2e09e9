// warden-bench: the report of the scale and waiters modes.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scale_results.hpp"
#include "stats.hpp"

namespace warden_bench {

latency_figures summarize_latency(std::vector<std::int64_t> samples) {
  latency_figures f;
  f.count = samples.size();
  if (samples.empty()) return f;
  f.max = *std::max_element(samples.begin(), samples.end());
  f.p50 = percentile(samples, 0.50);
  f.p99 = percentile(samples, 0.99);
  f.p999 = percentile(samples, 0.999);
  return f;
}

namespace {

std::string four(const latency_figures& f) {
  if (f.count == 0) return "n/a | n/a | n/a | n/a";
  return fmt::format("{} | {} | {} | {}", format_ns(f.p50), format_ns(f.p99), format_ns(f.p999), format_ns(f.max));
}

std::string percent(double share) {
  return std::isfinite(share) ? fmt::format("{:.1f} %", share * 100) : std::string("n/a");
}

double per(std::int64_t after, std::int64_t before, std::size_t n) {
  if (after < 0 || before < 0 || n == 0) return NAN;
  return static_cast<double>(after - before) / static_cast<double>(n);
}

std::string bytes_delta(std::int64_t after, std::int64_t before) {
  if (after < 0 || before < 0) return "n/a";
  return format_bytes(static_cast<double>(after - before));
}

std::uint64_t expected_scripts(const scale_result& s) { return (s.holds + s.batch - 1) / s.batch; }

double mean_renewal_scripts(const scale_result& s) {
  if (s.windows.empty()) return NAN;
  double sum = 0;
  for (const auto& w : s.windows) sum += w.renewal_scripts;
  return sum / static_cast<double>(s.windows.size());
}

bool scripts_on_target(const scale_result& s) {
  const double want = static_cast<double>(expected_scripts(s));
  const double slack = std::max(1.0, want * renewal_scripts_tolerance);
  if (s.windows.empty()) return false;
  for (const auto& w : s.windows) {
    if (std::abs(w.renewal_scripts - want) > slack) return false;
  }
  return true;
}

double added_ms(std::int64_t hold, const latency_figures& baseline) {
  return static_cast<double>(hold - baseline.p50) / 1e6;
}

void print_scale(std::FILE* out, const scale_result& s) {
  fmt::print(out, "## Scale: {} held locks, lease {} ms (renewal period {} ms), {} periods\n\n",
             group_thousands(s.holds), s.lease.count(), s.period.count(), s.periods);
  fmt::print(out,
             "Owner: {}. Acquires and releases: lock_async / unlock_async with completion callbacks, at most "
             "{} outstanding.\n\n",
             s.owner_note, group_thousands(s.max_outstanding));

  fmt::print(out, "### Phases\n\n");
  fmt::print(out, "| phase | time | rate | errors (timed out) |\n|---|--:|--:|--:|\n");
  fmt::print(out, "| (a) baseline: probe alone | {:.2f} s | {} pairs | {} |\n", s.baseline_s,
             group_thousands(s.baseline.count), s.baseline_errors);
  fmt::print(out, "| (b) acquire {} | {:.2f} s | {} locks/s | {} ({}) |\n", group_thousands(s.holds), s.acquire_s,
             format_rate(static_cast<double>(s.holds) / s.acquire_s), s.acquire_errors, s.acquire_timed_out);
  fmt::print(out, "| (c) hold: placing the windows | {:.2f} s | | |\n", s.calibration_s);
  fmt::print(out, "| (c) hold: {} windows | {:.2f} s | | {} (probe) |\n", s.windows.size(), s.hold_s, s.probe_errors);
  fmt::print(out, "| release {} (client CPU {}) | {:.2f} s | {} locks/s | {} ({}) |\n\n", group_thousands(s.holds),
             std::isfinite(s.release_cpu_s) ? fmt::format("{:.1f} s", s.release_cpu_s) : std::string("n/a"),
             s.release_s, format_rate(static_cast<double>(s.holds) / s.release_s), s.release_errors,
             s.release_timed_out);

  fmt::print(out, "### Probe (lock()+unlock() on another lock, one pair per 2 ms)\n\n");
  fmt::print(out, "| when | pairs | p50 | p99 | p99.9 | max |\n|---|--:|--:|--:|--:|--:|\n");
  fmt::print(out, "| (a) baseline, no holds | {} | {} |\n", group_thousands(s.baseline.count), four(s.baseline));
  fmt::print(out, "| (c) holding {} | {} | {} |\n", group_thousands(s.holds), group_thousands(s.hold_probe.count),
             four(s.hold_probe));
  if (s.hold_probe.count != 0 && s.baseline.count != 0) {
    fmt::print(out,
               "\nAdded latency (holding − baseline p50): worst (max) {:.2f} ms, p99 {:.2f} ms, p99.9 {:.2f} ms.\n",
               added_ms(s.hold_probe.max, s.baseline), added_ms(s.hold_probe.p99, s.baseline),
               added_ms(s.hold_probe.p999, s.baseline));
  }

  fmt::print(out, "\n### Renewal, per period window\n\n");
  fmt::print(
      out,
      "| window | scripts (server) | probe pairs | renewal scripts | batches sent | holds sent | renewed | gone | "
      "failed | batch latency p50 / max | first→last sent | largest gap | most sent in 10 ms | probe p99 / max |\n");
  fmt::print(out, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (std::size_t k = 0; k < s.windows.size(); ++k) {
    const auto& w = s.windows[k];
    fmt::print(
        out, "| {} | {} | {} | {:.0f} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", k + 1,
        group_thousands(w.scripts), group_thousands(w.probe_pairs), w.renewal_scripts, group_thousands(w.batches_sent),
        group_thousands(w.holds_sent), group_thousands(w.renewed), w.gone, w.failed,
        w.batch_latency.count ? fmt::format("{} / {}", format_ns(w.batch_latency.p50), format_ns(w.batch_latency.max))
                              : std::string("n/a"),
        format_ns(w.sent_span_ns), format_ns(w.largest_gap_ns), w.most_in_10ms,
        w.probe.count ? fmt::format("{} / {}", format_ns(w.probe.p99), format_ns(w.probe.max)) : std::string("n/a"));
  }
  fmt::print(out, "\nExpected renewal scripts per period ⌈H / {}⌉ = {}; observed mean {:.1f}.\n", s.batch,
             group_thousands(expected_scripts(s)), mean_renewal_scripts(s));

  fmt::print(out, "\n### CPU, keys, lost holds\n\n");
  fmt::print(out, "| figure | value |\n|---|--:|\n");
  fmt::print(out, "| client CPU while holding (process, all threads) | {} of a core |\n", percent(s.client_cpu_share));
  fmt::print(out, "| − probe's share (process CPU in the baseline) | {} |\n", percent(s.baseline_cpu_share));
  fmt::print(out, "| − PTTL sampler thread | {} |\n", percent(s.sampler_cpu_share));
  fmt::print(out, "| = client CPU for renewals | {} |\n", percent(s.renewal_cpu_share));
  fmt::print(out, "| redis-server CPU while holding (INFO cpu) | {} of a core |\n", percent(s.server_cpu_share));
  fmt::print(
      out,
      "| **quiet: client CPU over {} periods with only the watchdog at work** ({} holds renewed) | {} of a core |\n",
      s.quiet_periods, group_thousands(s.quiet_renewals), percent(s.quiet_cpu_share));
  if (s.quiet_renewals != 0 && std::isfinite(s.quiet_cpu_share)) {
    fmt::print(out, "| quiet: client CPU per renewed hold | {:.2f} µs |\n",
               s.quiet_cpu_share * s.quiet_s * 1e6 / static_cast<double>(s.quiet_renewals));
  }
  fmt::print(out, "| min PTTL of {} sampled held keys ({} rounds, every 100 ms) | {} |\n", s.pttl_keys, s.pttl_rounds,
             s.min_pttl_ms >= 0 ? fmt::format("{} ms", s.min_pttl_ms) : std::string("n/a"));
  fmt::print(out, "| sampled keys missing (-2) / without expiry (-1) | {} / {} |\n", s.pttl_missing, s.pttl_no_expiry);
  fmt::print(out, "| holds lost (Observer::on_hold_lost, first acquire to end) | {} |\n\n", s.holds_lost);

  fmt::print(out, "### Client memory (heap: mallinfo2 uordblks + hblkhd; RSS: /proc/self/statm)\n\n");
  fmt::print(out, "| reading | heap | Δ heap | per lock | RSS | Δ RSS |\n|---|--:|--:|--:|--:|--:|\n");
  auto row = [&](const char* what, const memory_sample& m) {
    fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", what, format_bytes(static_cast<double>(m.heap)),
               bytes_delta(m.heap, s.before.heap), format_bytes(per(m.heap, s.before.heap, s.holds)),
               format_bytes(static_cast<double>(m.rss)), bytes_delta(m.rss, s.before.rss));
  };
  row("before the handles", s.before);
  row("H held (after acquiring; min of 5 over a period)", s.held);
  row("H held (after the hold phase)", s.held_end);
  row("all released, handles dropped, 2 s + 300 pairs on another lock", s.after);
  fmt::print(out, "\n");
}

void print_waiters(std::FILE* out, const waiters_result& w) {
  fmt::print(out, "## Waiters: {} async waiters on {} held locks, all released at once\n\n", group_thousands(w.waiters),
             group_thousands(w.waiters));
  fmt::print(out, "| figure | value |\n|---|--:|\n");
  fmt::print(out,
             "| holder Client takes {} locks (lock_async, ≤ 1,000 outstanding, watchdog lease {} ms) | {:.2f} s |\n",
             group_thousands(w.waiters), w.lease.count(), w.holder_acquire_s);
  fmt::print(out, "| waiters parked ({}) | {:.2f} s after the first lock_async |\n",
             w.parked ? "every channel subscribed, no waiter script for 500 ms" : "✗ not detected in time", w.park_s);
  fmt::print(out, "| channels with subscribers / waiter scripts until parked | {} / {} ({:.2f} per waiter) |\n",
             w.channels, group_thousands(w.scripts_to_park),
             w.waiters ? static_cast<double>(w.scripts_to_park) / static_cast<double>(w.waiters) : 0.0);
  fmt::print(out, "| issuing the holder's {} unlock_async back to back | {} |\n", group_thousands(w.waiters),
             format_ns(static_cast<std::int64_t>(w.release_issue_s * 1e9)));
  fmt::print(out, "| waiters that got their lock | {} of {} |\n", group_thousands(w.acquired),
             group_thousands(w.waiters));
  fmt::print(out, "| waiter errors / holder release errors | {} / {} |\n", w.waiter_errors, w.holder_release_errors);
  fmt::print(out, "| wake latency (release-all start → completion) p50 / p99 / p99.9 / max | {} |\n",
             w.wake.count ? fmt::format("{} / {} / {} / {}", format_ns(w.wake.p50), format_ns(w.wake.p99),
                                        format_ns(w.wake.p999), format_ns(w.wake.max))
                          : std::string("n/a"));
  fmt::print(
      out, "| wake latency (its own lock's release answered → completion) p50 / p99 / p99.9 / max | {} |\n",
      w.wake_after_release.count
          ? fmt::format("{} / {} / {} / {}", format_ns(w.wake_after_release.p50), format_ns(w.wake_after_release.p99),
                        format_ns(w.wake_after_release.p999), format_ns(w.wake_after_release.max))
          : std::string("n/a"));
  fmt::print(out, "| release-all start → last completion | {:.3f} s |\n", w.total_s);
  fmt::print(out,
             "| redis-server CPU over it (INFO cpu): every release and every woken acquire is a script there | {} |\n",
             format_ns(static_cast<std::int64_t>(w.wake_server_cpu_s * 1e9)));
  fmt::print(out,
             "| the bench process's CPU over it (both Clients' I/O threads, the bench polling every 1 ms) | {} |\n",
             format_ns(static_cast<std::int64_t>(w.wake_client_cpu_s * 1e9)));
  fmt::print(out, "| the server's calls by command over it (INFO commandstats) | {} |\n",
             format_command_calls(w.wake_commands));
  fmt::print(out, "| keys the server expired over it (INFO stats expired_keys) | {} |\n", w.wake_expired_keys);
  fmt::print(out, "| then until the waiters' channels have no subscriber left | {}; calls: {} |\n",
             w.channels_gone_s >= 0 ? format_ns(static_cast<std::int64_t>(w.channels_gone_s * 1e9))
                                    : std::string("✗ not within 10 s"),
             format_command_calls(w.tail_commands));
  if (w.second_wake.count) {
    fmt::print(out, "| second cycle (other names): wake p50 / p99 / max | {} / {} / {} |\n",
               format_ns(w.second_wake.p50), format_ns(w.second_wake.p99), format_ns(w.second_wake.max));
  }
  int run = 0;
  for (const wake_floor& floor : w.floors.runs) {
    ++run;
    if (floor.error.empty()) {
      fmt::print(out,
                 "| the server's floor, reading {} of {} ({}): the same {} releases and {} acquires pipelined on one "
                 "plain connection, a listener subscribed to every channel (no client can wake the last waiter "
                 "sooner) | {}, redis-server CPU {}, {} keys expired; calls: {} |\n",
                 run, w.floors.runs.size(), run <= 2 ? "before the cycles" : "after them", group_thousands(floor.locks),
                 group_thousands(floor.locks), format_ns(static_cast<std::int64_t>(floor.seconds * 1e9)),
                 format_ns(static_cast<std::int64_t>(floor.server_cpu_s * 1e9)), floor.expired_keys,
                 format_command_calls(floor.commands));
    } else {
      fmt::print(out, "| the server's floor, reading {} of {} | not measured: {} |\n", run, w.floors.runs.size(),
                 floor.error);
    }
  }
  if (w.floors.measured() != 0) {
    fmt::print(out,
               "| the server's floor: median / fastest of {} readings (before each, the bench's unlock latches "
               "removed: {} in all, so that none expires in a measured window) | {} / {} |\n",
               w.floors.measured(), group_thousands(w.latches_dropped),
               format_ns(static_cast<std::int64_t>(w.floors.median_s() * 1e9)),
               format_ns(static_cast<std::int64_t>(w.floors.min_s() * 1e9)));
  }
  fmt::print(out, "| waiters' unlock_async of their new holds | {:.2f} s, {} errors |\n", w.unlock_s, w.unlock_errors);
  fmt::print(out, "| holds lost (both Clients) | {} |\n\n", w.holds_lost);

  fmt::print(
      out, "| reading (measured Client, heap: mallinfo2 uordblks + hblkhd) | heap | Δ | per waiter / name | Δ RSS |\n");
  fmt::print(out, "|---|--:|--:|--:|--:|\n");
  fmt::print(out, "| baseline: measured Client warm, no holder yet | {} | | | |\n",
             format_bytes(static_cast<double>(w.baseline.heap)));
  fmt::print(out, "| holder holding, before the waiters' handles | {} | | | |\n",
             format_bytes(static_cast<double>(w.before.heap)));
  fmt::print(out, "| {} waiters parked (Δ from the row above) | {} | {} | {} | {} |\n", group_thousands(w.waiters),
             format_bytes(static_cast<double>(w.parked_memory.heap)), bytes_delta(w.parked_memory.heap, w.before.heap),
             format_bytes(per(w.parked_memory.heap, w.before.heap, w.waiters)),
             bytes_delta(w.parked_memory.rss, w.before.rss));
  fmt::print(out, "| destroying the holder Client (its handles dropped) freed | | {} | {} | |\n",
             bytes_delta(w.holder_gone_before.heap, w.holder_gone_after.heap),
             format_bytes(per(w.holder_gone_before.heap, w.holder_gone_after.heap, w.waiters)));
  fmt::print(out,
             "| end of cycle 1: all released and dropped, holder Client destroyed, 2 s + 300 pairs (Δ from baseline; "
             "allocator caches included) | {} | {} | {} | {} |\n",
             format_bytes(static_cast<double>(w.after.heap)), bytes_delta(w.after.heap, w.baseline.heap),
             format_bytes(per(w.after.heap, w.baseline.heap, w.waiters)), bytes_delta(w.after.rss, w.baseline.rss));
  fmt::print(out, "| cycle 2 on {} other names: waiters parked (Δ from its holder holding) | {} | {} | {} | {} |\n",
             group_thousands(w.waiters), format_bytes(static_cast<double>(w.second_parked.heap)),
             bytes_delta(w.second_parked.heap, w.second_before.heap),
             format_bytes(per(w.second_parked.heap, w.second_before.heap, w.waiters)),
             bytes_delta(w.second_parked.rss, w.second_before.rss));
  fmt::print(out, "| end of cycle 2 (Δ from the end of cycle 1: kept per name) | {} | {} | {} | {} |\n",
             format_bytes(static_cast<double>(w.after_second.heap)), bytes_delta(w.after_second.heap, w.after.heap),
             format_bytes(per(w.after_second.heap, w.after.heap, w.waiters)),
             bytes_delta(w.after_second.rss, w.after.rss));
  fmt::print(out, "| cycle 2: waiters that got their lock / errors and holds lost | {} of {} / {} | | | |\n\n",
             group_thousands(w.second_acquired), group_thousands(w.waiters), w.second_errors);
}

void print_targets(std::FILE* out, const scale_report_input& in) {
  fmt::print(out, "## Targets (issues 14 and 29)\n\n| target | measured | verdict |\n|---|--:|---|\n");
  if (const scale_result* s = in.scale) {
    const std::string h = group_thousands(s->holds);
    if (s->hold_probe.count != 0 && s->baseline.count != 0) {
      const double worst = added_ms(s->hold_probe.max, s->baseline);
      fmt::print(out, "| worst added latency ≤ {:g} ms (H = {}; p99 added {:.2f} ms) | {:.2f} ms | {} |\n",
                 max_added_latency_ms, h, added_ms(s->hold_probe.p99, s->baseline), worst,
                 pass_mark(worst <= max_added_latency_ms));
    } else {
      fmt::print(out, "| worst added latency ≤ {:g} ms | n/a | ✗ MISS |\n", max_added_latency_ms);
    }
    fmt::print(out,
               "| client CPU for renewals < {:g} % of a core (quiet periods; with the probe, less its share: {}) | {} "
               "| {} |\n",
               max_renewal_cpu_share * 100, percent(s->renewal_cpu_share), percent(s->quiet_cpu_share),
               pass_mark(std::isfinite(s->quiet_cpu_share) && s->quiet_cpu_share < max_renewal_cpu_share));
    std::string observed;
    for (const auto& w : s->windows)
      observed += fmt::format("{}{:.0f}", observed.empty() ? "" : ", ", w.renewal_scripts);
    fmt::print(out, "| renewal scripts per period = ⌈H / {}⌉ = {} | {} | {} |\n", s->batch,
               group_thousands(expected_scripts(*s)), observed, pass_mark(scripts_on_target(*s)));
    // The larger of the readings after acquiring and after the hold phase.
    const double per_hold = per(std::max(s->held.heap, s->held_end.heap), s->before.heap, s->holds);
    fmt::print(out, "| ≤ 1 KiB client memory per held lock (heap, the larger of the two held readings) | {} | {} |\n",
               format_bytes(per_hold), pass_mark(per_hold <= max_bytes_per_hold));
    // What an operator sees (issue 29): resident memory, not only the heap.
    const double rss_per_hold = per(std::max(s->held.rss, s->held_end.rss), s->before.rss, s->holds);
    fmt::print(out, "| ≤ 1 KiB RSS per held lock (the larger of the two held readings) | {} | {} |\n",
               format_bytes(rss_per_hold), pass_mark(rss_per_hold <= max_bytes_per_hold));
    fmt::print(out, "| every release answered, none failed or timed out | {} failed, {} timed out | {} |\n",
               group_thousands(s->release_errors), group_thousands(s->release_timed_out),
               pass_mark(s->release_errors == 0));
    const double left = per(s->after.heap, s->before.heap, s->holds);
    fmt::print(out, "| leftover per name ≤ {:g} B (scale) | {} | {} |\n", max_leftover_per_name, format_bytes(left),
               pass_mark(left <= max_leftover_per_name));
    const bool kept = s->holds_lost == 0 && s->pttl_missing == 0 && s->pttl_error.empty() && s->min_pttl_ms > 0;
    fmt::print(out, "| 0 holds lost, every sampled key kept (min PTTL {} ms) | {} lost | {} |\n", s->min_pttl_ms,
               s->holds_lost, pass_mark(kept));
  }
  if (const waiters_result* w = in.waiters) {
    const double per_waiter = per(w->parked_memory.heap, w->before.heap, w->waiters);
    fmt::print(out, "| ≤ 1 KiB per parked waiter | {} | {} |\n", format_bytes(per_waiter),
               pass_mark(w->parked && per_waiter <= max_bytes_per_waiter));
    // Judged on the growth between the ends of the two cycles: what warden
    // keeps per name, not what the allocator caches (see the report notes).
    const double kept = per(w->after_second.heap, w->after.heap, w->waiters);
    const double left = per(w->after.heap, w->baseline.heap, w->waiters);
    fmt::print(out,
               "| kept per name ≤ {:g} B (waiters: growth from cycle 1's end to cycle 2's; after cycle 1 vs baseline "
               "{}) | {} | {} |\n",
               max_leftover_per_name, format_bytes(left), format_bytes(kept), pass_mark(kept <= max_leftover_per_name));
    const double p99 = static_cast<double>(w->wake.p99) / 1e6;
    const double floor_ms = w->floors.median_s() * 1e3;
    const std::string floor =
        floor_ms > 0 ? fmt::format("; the server's floor (median) {:.1f} ms", floor_ms) : std::string();
    fmt::print(
        out,
        "| waiters wake p99 ≤ {:g} ms from release-all start, all {} get their lock | {:.1f} ms{}, {} got it | {} |\n",
        max_wake_p99_ms, group_thousands(w->waiters), p99, floor, group_thousands(w->acquired),
        pass_mark(w->wake.count != 0 && p99 <= max_wake_p99_ms && w->acquired == w->waiters));
    if (floor_ms > 0 && w->wake.count != 0) {
      const double ratio = p99 / floor_ms;
      fmt::print(out,
                 "| waiters wake p99 ≤ {:g} × the server's floor in the same run (median of {} readings; against the "
                 "fastest {:.2f} ×) | {:.2f} × | {} |\n",
                 max_wake_p99_over_floor, w->floors.measured(), p99 / (w->floors.min_s() * 1e3), ratio,
                 pass_mark(ratio <= max_wake_p99_over_floor && w->acquired == w->waiters));
    }
    fmt::print(out, "| 0 holds lost (waiters) | {} | {} |\n", w->holds_lost, pass_mark(w->holds_lost == 0));
  }
  fmt::print(out, "\n");
}

}  // namespace

void print_scale_report(std::FILE* out, const scale_report_input& in) {
  fmt::print(out, "# warden-bench: scale\n\n");
  fmt::print(out, "Server: {}. CPUs: {}. Load average at start: {}; at end: {}.\n\n", in.server, in.cpus,
             in.load_at_start.empty() ? "n/a" : in.load_at_start, in.load_at_end.empty() ? "n/a" : in.load_at_end);
  if (in.scale) print_scale(out, *in.scale);
  if (in.waiters) print_waiters(out, *in.waiters);
  print_targets(out, in);
  if (!in.notes.empty()) {
    fmt::print(out, "## Notes\n\n");
    for (const auto& note : in.notes) fmt::print(out, "- {}\n", note);
    fmt::print(out, "\n");
  }
}

}  // namespace warden_bench
