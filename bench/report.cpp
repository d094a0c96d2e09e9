#include "report.hpp"

#include <functional>

#include <fmt/format.h>

namespace warden_bench {

namespace {

const bound_result& bound_for(const report_input& in, const scenario_spec& spec) {
  return spec.bound == bound_kind::single_connection ? in.bound_single : in.bound_eight;
}

const char* bound_label(const scenario_spec& spec) {
  return spec.bound == bound_kind::single_connection ? "1-conn ÷ 2" : "8-conn ÷ 2";
}

// "48.2 µs / 95.0 µs" or "n/a" when there were no samples.
std::string p50_p99(const distribution& d) {
  if (d.count == 0) return "n/a";
  return fmt::format("{} / {}", format_ns(d.p50), format_ns(d.p99));
}

std::string ratio(double value, double reference) {
  if (!(reference > 0)) return "n/a";
  return fmt::format("{:.2f}", value / reference);
}

void print_bound_table(std::FILE* out, const report_input& in) {
  fmt::print(out, "## Bound: redis-benchmark, EVALSHA of HINCRBY + PEXPIRE on one key\n\n");
  fmt::print(out, "| connections | requests | ops/s | latency p50 / p99 | bound in pairs/s (ops/s ÷ 2) |\n");
  fmt::print(out, "|---|--:|--:|--:|--:|\n");
  for (const bound_result* b : {&in.bound_single, &in.bound_eight}) {
    if (b->ok) {
      fmt::print(out, "| {} (-c {}) | {} | {} | {:.3f} ms / {:.3f} ms | {} |\n", b->connections, b->connections,
                 group_thousands(b->requests), format_rate(b->ops_per_s), b->p50_ms, b->p99_ms,
                 format_rate(b->pairs_per_s()));
    } else {
      fmt::print(out, "| {} (-c {}) | n/a | n/a | n/a | n/a (failed, see notes) |\n", b->connections, b->connections);
    }
  }
  fmt::print(out, "\n");
}

void print_scenario_table(std::FILE* out, const report_input& in) {
  const auto& results = in.results;
  fmt::print(out, "## Scenarios (all threads share one warden::Client)\n\n| figure |");
  for (const auto& r : results) fmt::print(out, " {} |", r.spec.name);
  fmt::print(out, "\n|---|");
  for (std::size_t i = 0; i < results.size(); ++i) fmt::print(out, "--:|");
  fmt::print(out, "\n");

  auto row = [&](const char* label, const std::function<std::string(const scenario_result&)>& cell) {
    fmt::print(out, "| {} |", label);
    for (const auto& r : results) fmt::print(out, " {} |", cell(r));
    fmt::print(out, "\n");
  };

  row("setup", [](const scenario_result& r) { return r.spec.description; });
  row("window", [](const scenario_result& r) { return fmt::format("{:.2f} s", r.window_s); });
  row("pairs completed in window (lock + unlock)",
      [](const scenario_result& r) { return group_thousands(r.pairs_in_window); });
  row("**pairs/s**", [](const scenario_result& r) { return fmt::format("**{}**", format_rate(r.pairs_per_s)); });
  row("pairs/s ÷ bound", [&](const scenario_result& r) {
    const bound_result& b = bound_for(in, r.spec);
    if (!b.ok) return std::string("n/a (no bound)");
    return fmt::format("{} (of {} = {})", ratio(r.pairs_per_s, b.pairs_per_s()), format_rate(b.pairs_per_s()),
                       bound_label(r.spec));
  });
  row("pair latency p50 / p99 (lock() start → unlock() end)",
      [](const scenario_result& r) { return p50_p99(r.pair_latency); });
  row("pair latency p50 ÷ (2 × bound p50)", [&](const scenario_result& r) {
    const bound_result& b = bound_for(in, r.spec);
    if (!b.ok || r.pair_latency.count == 0) return std::string("n/a");
    return ratio(static_cast<double>(r.pair_latency.p50), 2 * b.p50_ms * 1e6);
  });
  row("(a) acquisition wait p50 / p99 (lock() start → lock() return)",
      [](const scenario_result& r) { return p50_p99(r.acquisition_wait); });
  row("(b) hand-off gap p50 / p99 (previous owner's unlock() start → next owner's lock() return; owner changes)",
      [](const scenario_result& r) { return p50_p99(r.handoff_gap); });
  row("(b′) hand-off gap p50 / p99, only where the next owner was already waiting",
      [](const scenario_result& r) { return p50_p99(r.handoff_gap_waiting); });
  row("owner changes (share of successive acquisitions of a lock)", [](const scenario_result& r) {
    if (r.successions == 0) return std::string("n/a");
    return fmt::format("{:.1f} % ({} of {})", 100 * r.owner_change_share(), group_thousands(r.owner_changes),
                       group_thousands(r.successions));
  });
  row("acquisitions per thread min / max (min ÷ max)", [](const scenario_result& r) {
    return fmt::format("{} / {} ({})", group_thousands(r.per_thread_min), group_thousands(r.per_thread_max),
                       ratio(static_cast<double>(r.per_thread_min), static_cast<double>(r.per_thread_max)));
  });
  row("CPU busy during the window: this process / redis-server (cores)", [](const scenario_result& r) {
    auto cores = [&](double cpu_s) {
      return cpu_s >= 0 && r.window_s > 0 ? fmt::format("{:.2f}", cpu_s / r.window_s) : std::string("n/a");
    };
    return fmt::format("{} / {}", cores(r.client_cpu_s), cores(r.server_cpu_s));
  });
  row("CPU per pair: this process / redis-server", [](const scenario_result& r) {
    auto per_pair = [&](double cpu_s) {
      return cpu_s >= 0 && r.pairs_in_window > 0
                 ? format_ns(static_cast<std::int64_t>(cpu_s * 1e9 / static_cast<double>(r.pairs_in_window)))
                 : std::string("n/a");
    };
    return fmt::format("{} / {}", per_pair(r.client_cpu_s), per_pair(r.server_cpu_s));
  });
  row("mutual-exclusion violations (occupied flag / timestamp overlaps)", [](const scenario_result& r) {
    const std::string text = fmt::format("{} / {}", r.flag_violations, r.timestamp_overlaps);
    return r.violations() == 0 ? text : fmt::format("**{}**", text);
  });
  row("errors (lock() / unlock())", [](const scenario_result& r) {
    const std::string text = fmt::format("{} / {}", r.lock_errors, r.unlock_errors);
    return r.lock_errors + r.unlock_errors == 0 ? text : fmt::format("**{}**", text);
  });
  fmt::print(out, "\n");
}

const scenario_result* find(const report_input& in, const char* name) {
  for (const auto& r : in.results) {
    if (r.spec.name == name) return &r;
  }
  return nullptr;
}

const char* verdict(bool pass) { return pass ? "PASS" : "MISS"; }

void print_targets(std::FILE* out, const report_input& in) {
  fmt::print(out, "## Targets\n\n| target | measured | result |\n|---|---|---|\n");

  if (const auto* s1 = find(in, "S1")) {
    const bound_result& b = in.bound_single;
    if (b.ok) {
      const double needed = s1_min_share_of_bound * b.pairs_per_s();
      fmt::print(out, "| S1 pairs/s ≥ {:.1f} × (1-connection bound ÷ 2) = {} | {} ({} × bound) | {} |\n",
                 s1_min_share_of_bound, format_rate(needed), format_rate(s1->pairs_per_s),
                 ratio(s1->pairs_per_s, b.pairs_per_s()), verdict(s1->pairs_per_s >= needed));
    } else {
      fmt::print(out, "| S1 pairs/s ≥ {:.1f} × (1-connection bound ÷ 2) | {} (no bound) | n/a |\n",
                 s1_min_share_of_bound, format_rate(s1->pairs_per_s));
    }
  }
  if (const auto* s2 = find(in, "S2")) {
    const distribution& gap = s2->handoff_gap;
    auto line = [&](const char* which, std::int64_t value, double limit_ms) {
      if (gap.count == 0) {
        fmt::print(out, "| S2 takeover wait (hand-off gap) {} ≤ {:g} ms | n/a (no owner changes) | MISS |\n", which,
                   limit_ms);
        return;
      }
      fmt::print(out, "| S2 takeover wait (hand-off gap) {} ≤ {:g} ms | {} | {} |\n", which, limit_ms, format_ns(value),
                 verdict(static_cast<double>(value) <= limit_ms * 1e6));
    };
    line("p50", gap.p50, s2_max_handoff_p50_ms);
    line("p99", gap.p99, s2_max_handoff_p99_ms);
  }
  if (const auto* fair = find(in, "S2F")) {
    // FairLock hands the lock to the longest waiter: nearly every hand-off
    // changes owner and every thread gets its share.
    const double changes = fair->owner_change_share();
    const double balance = fair->per_thread_max == 0 ? 0.0
                                                      : static_cast<double>(fair->per_thread_min) /
                                                            static_cast<double>(fair->per_thread_max);
    fmt::print(out, "| S2F owner changes ≥ 95 % of hand-offs | {:.1f} % | {} |\n", changes * 100.0,
               verdict(changes >= 0.95));
    fmt::print(out, "| S2F per-thread acquisitions min ÷ max ≥ 0.9 | {:.2f} | {} |\n", balance, verdict(balance >= 0.9));
    const distribution& gap = fair->handoff_gap;
    if (gap.count == 0) {
      fmt::print(out, "| S2F takeover wait (hand-off gap) p50 ≤ 1 ms | n/a (no owner changes) | MISS |\n");
    } else {
      fmt::print(out, "| S2F takeover wait (hand-off gap) p50 ≤ 1 ms | {} | {} |\n", format_ns(gap.p50),
                 verdict(static_cast<double>(gap.p50) <= 1e6));
    }
  }
  if (const auto* s3 = find(in, "S3")) {
    const bound_result& b = in.bound_eight;
    const std::string share =
        b.ok ? fmt::format(" ({} × 8-conn bound ÷ 2)", ratio(s3->pairs_per_s, b.pairs_per_s())) : std::string();
    fmt::print(out, "| S3 pairs/s ≥ {} | {}{} | {} |\n", format_rate(s3_min_pairs_per_s), format_rate(s3->pairs_per_s),
               share, verdict(s3->pairs_per_s >= s3_min_pairs_per_s));
  }
  std::uint64_t violations = 0;
  std::string where;
  for (const auto& r : in.results) {
    violations += r.violations();
    where += (where.empty() ? "" : ", ") + r.spec.name;
  }
  fmt::print(out, "| mutual-exclusion violations = 0 ({}) | {} | {} |\n", where, violations,
             violations == 0 ? "PASS" : "FAIL");
  fmt::print(out, "\n");
}

}  // namespace

void print_report(std::FILE* out, const report_input& in) {
  fmt::print(out, "# warden-bench\n\n");
  fmt::print(out, "- server: {}\n", in.server);
#ifdef NDEBUG
  const char* build = "optimised (NDEBUG)";
#else
  const char* build = "assertions on (not a Release build: figures understate warden)";
#endif
  fmt::print(out, "- {:g} s per scenario and per redis-benchmark run; {} CPUs; bench build {}\n", in.duration_s,
             in.cpus, build);
  if (!in.load_at_start.empty()) {
    fmt::print(out,
               "- load average (1/5/15 min) at start: {}, at end: {} (other work on the machine skews every figure)\n",
               in.load_at_start, in.load_at_end);
  }
  fmt::print(out, "\n");
  print_bound_table(out, in);
  print_scenario_table(out, in);
  print_targets(out, in);
  if (!in.notes.empty()) {
    fmt::print(out, "## Notes\n\n");
    for (const auto& note : in.notes) fmt::print(out, "- {}\n", note);
    fmt::print(out, "\n");
  }
  std::fflush(out);
}

}  // namespace warden_bench
