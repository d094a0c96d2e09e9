#include "report.hpp"

#include <functional>
#include <optional>

#include <fmt/format.h>

namespace warden_bench {

namespace {

const bound_result& bound_for(const report_input& in, const scenario_spec& spec) {
  static const bound_result no_bound{};
  switch (spec.bound) {
    case bound_kind::single_connection:
      return in.bound_single;
    case bound_kind::eight_connections:
      return in.bound_eight;
    case bound_kind::none:
      break;
  }
  return no_bound;
}

const char* bound_label(const scenario_spec& spec) {
  return spec.bound == bound_kind::single_connection ? "1-conn ÷ 2" : "8-conn ÷ 2";
}

bool paced(const scenario_spec& spec) { return spec.pace > std::chrono::nanoseconds::zero(); }

// A loop run whose figures can be compared with, or nullptr.
const loop_result* usable(const loop_result& loop) { return loop.ran && loop.ok && loop.pairs > 0 ? &loop : nullptr; }

// The loop run a scenario is compared with: the paced one for a paced
// scenario, the back-to-back one otherwise.
const loop_result* loop_for(const report_input& in, const scenario_spec& spec) {
  return usable(paced(spec) ? in.loop_paced : in.loop);
}

// Voluntary / involuntary context switches per pair, or "n/a".
std::string switches_per_pair(const context_switches& switches, std::uint64_t pairs) {
  if (switches.voluntary < 0 || pairs == 0) return "n/a";
  auto per_pair = [&](long count) { return static_cast<double>(count) / static_cast<double>(pairs); };
  return fmt::format("{:.1f} / {:.1f}", per_pair(switches.voluntary), per_pair(switches.involuntary));
}

std::string format_cpu(double ns) { return ns >= 0 ? format_ns(static_cast<std::int64_t>(ns)) : std::string("n/a"); }

const char* verdict(bool pass) { return pass ? "✓ PASS" : "✗ MISS"; }
const char* mark(bool pass) { return pass ? "✓" : "✗"; }

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
  fmt::print(out, "| connections | on | requests | ops/s | latency p50 / p99 | bound in pairs/s (ops/s ÷ 2) |\n");
  fmt::print(out, "|---|---|--:|--:|--:|--:|\n");
  for (const bound_result* b : {&in.bound_single, &in.bound_eight}) {
    const std::string where = b->where.empty() ? std::string("n/a") : b->where;
    if (b->ok) {
      fmt::print(out, "| {} (-c {}) | {} | {} | {} | {:.3f} ms / {:.3f} ms | {} |\n", b->connections, b->connections,
                 where, group_thousands(b->requests), format_rate(b->ops_per_s), b->p50_ms, b->p99_ms,
                 format_rate(b->pairs_per_s()));
    } else {
      fmt::print(out, "| {} (-c {}) | {} | n/a | n/a | n/a | n/a (failed, see notes) |\n", b->connections,
                 b->connections, where);
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
    if (r.spec.bound == bound_kind::none) return std::string("n/a (paced)");
    const bound_result& b = bound_for(in, r.spec);
    if (!b.ok) return std::string("n/a (no bound)");
    return fmt::format("{} (of {} = {})", ratio(r.pairs_per_s, b.pairs_per_s()), format_rate(b.pairs_per_s()),
                       bound_label(r.spec));
  });
  row("pairs/s ÷ plain-hiredis loop's (P1: ÷ the paced loop's)", [&](const scenario_result& r) {
    const loop_result* loop = loop_for(in, r.spec);
    return loop ? ratio(r.pairs_per_s, loop->pairs_per_s) : std::string("n/a (no loop)");
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
  // S2 and S2F are judged on these two rows: the target stands next to the value.
  auto contended = [](const scenario_result& r) { return r.spec.name == "S2" || r.spec.name == "S2F"; };
  row("(b) hand-off gap p50 / p99 (previous owner's unlock() start → next owner's lock() return; owner changes)",
      [&](const scenario_result& r) {
        std::string text = p50_p99(r.handoff_gap);
        if (contended(r) && r.handoff_gap.count > 0) {
          const bool pass = static_cast<double>(r.handoff_gap.p50) <= s2_max_handoff_p50_ms * 1e6;
          text += fmt::format(" (target p50 ≤ {:g} ms {})", s2_max_handoff_p50_ms, mark(pass));
        }
        return text;
      });
  row("(b′) hand-off gap p50 / p99, only where the next owner was already waiting",
      [](const scenario_result& r) { return p50_p99(r.handoff_gap_waiting); });
  row("owner changes (share of successive acquisitions of a lock)", [&](const scenario_result& r) {
    if (r.successions == 0) return std::string("n/a");
    std::string text = fmt::format("{:.1f} % ({} of {})", 100 * r.owner_change_share(),
                                   group_thousands(r.owner_changes), group_thousands(r.successions));
    if (contended(r)) {
      text += fmt::format(" (target ≥ {:g} % {})", 100 * s2_min_owner_changes,
                          mark(r.owner_change_share() >= s2_min_owner_changes));
    }
    return text;
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
    return fmt::format("{} / {}", format_cpu(r.per_pair_ns(r.client_cpu_s)), format_cpu(r.per_pair_ns(r.server_cpu_s)));
  });
  row("client context switches per pair: voluntary / involuntary (loop's)", [&](const scenario_result& r) {
    const loop_result* loop = loop_for(in, r.spec);
    auto text = switches_per_pair(r.client_switches, r.pairs_in_window);
    return loop ? fmt::format("{} ({})", text, switches_per_pair(loop->client_switches, loop->pairs)) : text;
  });
  row("client CPU per pair ÷ plain-hiredis loop's (P1: ÷ the paced loop's)", [&](const scenario_result& r) {
    const loop_result* loop = loop_for(in, r.spec);
    if (!loop) return std::string("n/a (no loop)");
    return ratio(r.per_pair_ns(r.client_cpu_s), loop->per_pair_ns(loop->client_cpu_s));
  });
  auto per_pair = [](double value) { return value >= 0 ? fmt::format("{:.2f}", value) : std::string("n/a"); };
  row("Redis commands per pair: scripts (EVALSHA + EVAL) / SUBSCRIBE + UNSUBSCRIBE / PUBLISH / all",
      [&](const scenario_result& r) {
        return fmt::format("{} / {} / {} / {}", per_pair(r.commands_per_pair({"evalsha", "eval"})),
                           per_pair(r.commands_per_pair({"subscribe", "unsubscribe", "ssubscribe", "sunsubscribe"})),
                           per_pair(r.commands_per_pair({"publish", "spublish"})), per_pair(r.all_commands_per_pair()));
      });
  row("ticks skipped (paced: a pair ran past the next tick)",
      [](const scenario_result& r) { return paced(r.spec) ? group_thousands(r.skipped_ticks) : std::string("–"); });
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

void print_loop_table(std::FILE* out, const report_input& in) {
  fmt::print(out,
             "## Plain-hiredis loop: warden's lock_acquire + lock_release scripts (EVALSHA, warden's keys and "
             "arguments), one blocking connection to {}, one thread\n\n",
             in.loop_where.empty() ? std::string("the server") : in.loop_where);
  fmt::print(out,
             "| run | window | pairs | pairs/s | pair latency p50 / p99 | client CPU per pair: process / loop thread "
             "| redis-server CPU per pair | CPU busy: process / redis-server (cores) |\n");
  fmt::print(out, "|---|--:|--:|--:|--:|--:|--:|--:|\n");
  auto line = [&](const char* label, const loop_result& l) {
    if (!l.ran || !l.ok) {
      fmt::print(out, "| {} | n/a | {} | n/a | n/a | n/a | n/a | n/a (failed, see notes) |\n", label,
                 group_thousands(l.pairs));
      return;
    }
    auto cores = [&](double cpu_s) {
      return cpu_s >= 0 && l.window_s > 0 ? fmt::format("{:.2f}", cpu_s / l.window_s) : std::string("n/a");
    };
    fmt::print(out, "| {} | {:.2f} s | {} | {} | {} | {} / {} | {} | {} / {} |\n", label, l.window_s,
               group_thousands(l.pairs), format_rate(l.pairs_per_s), p50_p99(l.pair_latency),
               format_cpu(l.per_pair_ns(l.client_cpu_s)), format_cpu(l.per_pair_ns(l.loop_thread_cpu_s)),
               format_cpu(l.per_pair_ns(l.server_cpu_s)), cores(l.client_cpu_s), cores(l.server_cpu_s));
  };
  line("back to back (compared with S1, S2, S3)", in.loop);
  if (in.loop_paced.ran) {
    const std::string label = fmt::format("paced, one pair per {:g} ms tick (compared with P1)", in.pace_ms);
    line(label.c_str(), in.loop_paced);
  }
  if (in.loop_threads.ran) {
    const std::string label = fmt::format(
        "{} threads side by side, each on a connection and a lock of its own (S3's ceiling; figures of all {})",
        in.loop_threads_count, in.loop_threads_count);
    line(label.c_str(), in.loop_threads);
  }
  fmt::print(out, "\n");
}

// One line of the targets table; `pass` unset: cannot be judged (n/a).
void target_row(std::FILE* out, const std::string& target, const std::string& measured, std::optional<bool> pass) {
  fmt::print(out, "| {} | {} | {} |\n", target, measured, pass ? verdict(*pass) : "n/a");
}

// "a ÷ b = r" for the measured column of a ratio target.
std::string quotient(const std::string& a, const std::string& b, double value, double reference) {
  return fmt::format("{} ÷ {} = {}", a, b, ratio(value, reference));
}

void print_targets(std::FILE* out, const report_input& in) {
  fmt::print(out, "## Targets\n\n| target | measured | result |\n|---|---|---|\n");
  const loop_result* loop = usable(in.loop);
  const loop_result* loop_paced = usable(in.loop_paced);

  // On a cluster the loop ran on master 0 alone, where S1's and P1's lock
  // lives: say so in each row that compares with it.
  const std::string loop_on = in.cluster ? fmt::format(" (on master 0 alone, {})", in.loop_where) : std::string();
  // Throughput and client CPU per pair against the plain-hiredis loop, and
  // the thread wake-ups per pair beside the loop's (no target: it explains
  // the CPU).
  // min_share 0: no throughput target (a paced run's rate is its clock's).
  auto against_loop = [&](const scenario_result& r, const loop_result* l, const std::string& what,
                          const std::string& yardstick_text, double min_share, double max_cpu,
                          const std::string& suffix) {
    const std::string yardstick = yardstick_text + loop_on;
    if (min_share > 0) {
      const std::string target =
          fmt::format("{} pairs/s ≥ {:g} × plain-hiredis loop{} pairs/s", what, min_share, loop_on);
      if (l) {
        target_row(out, target,
                   quotient(format_rate(r.pairs_per_s), format_rate(l->pairs_per_s), r.pairs_per_s, l->pairs_per_s),
                   r.pairs_per_s >= min_share * l->pairs_per_s);
      } else {
        target_row(out, target, fmt::format("{} (no loop)", format_rate(r.pairs_per_s)), std::nullopt);
      }
    }
    const std::string target = fmt::format("{} client CPU per pair ≤ {:g} × {}", what, max_cpu, yardstick);
    const double mine = r.per_pair_ns(r.client_cpu_s);
    const double theirs = l ? l->per_pair_ns(l->client_cpu_s) : -1;
    if (mine >= 0 && theirs > 0) {
      target_row(out, target, quotient(format_cpu(mine), format_cpu(theirs), mine, theirs) + suffix,
                 mine <= max_cpu * theirs);
    } else {
      target_row(out, target, fmt::format("{} ÷ {}", format_cpu(mine), format_cpu(theirs)) + suffix, std::nullopt);
    }
    if (min_share == 0 || r.spec.threads == 1) {
      target_row(
          out,
          fmt::format("{} voluntary / involuntary context switches per pair (beside {}; no target)", what, yardstick),
          fmt::format("{} ({})", switches_per_pair(r.client_switches, r.pairs_in_window),
                      l ? switches_per_pair(l->client_switches, l->pairs) : std::string("n/a")),
          std::nullopt);
    }
  };
  if (const auto* s1 = find(in, "S1")) {
    against_loop(*s1, loop, "S1", "the loop's", s1_min_share_of_loop, s1_max_cpu_vs_loop, "");
  }
  if (const auto* p1 = find(in, "P1")) {
    const std::string pairs =
        fmt::format(" (pairs done: warden {}, loop {})", group_thousands(p1->pairs_in_window),
                    in.loop_paced.ran ? group_thousands(in.loop_paced.pairs) : std::string("n/a"));
    against_loop(*p1, loop_paced, fmt::format("P1 (one pair per {:g} ms)", in.pace_ms), "the paced loop's", 0,
                 p1_max_cpu_vs_loop, pairs);
  }
  if (const auto* s3 = find(in, "S3")) {
    against_loop(*s3, loop, "S3", "the loop's (back to back, one thread)", s3_min_share_of_loop, s3_max_cpu_vs_loop,
                 "");
    // What S3 gets of what its threads could get with no library and no
    // contention: where a comparison with another client's S3 starts from.
    if (const loop_result* ceiling = usable(in.loop_threads)) {
      target_row(
          out,
          fmt::format("S3 pairs/s and server CPU per pair beside the {}-thread loop's (S3's ceiling; no target)",
                      in.loop_threads_count),
          fmt::format("{} ÷ {} = {}; {} ÷ {} = {}", format_rate(s3->pairs_per_s), format_rate(ceiling->pairs_per_s),
                      ratio(s3->pairs_per_s, ceiling->pairs_per_s), format_cpu(s3->per_pair_ns(s3->server_cpu_s)),
                      format_cpu(ceiling->per_pair_ns(ceiling->server_cpu_s)),
                      ratio(s3->per_pair_ns(s3->server_cpu_s), ceiling->per_pair_ns(ceiling->server_cpu_s))),
          std::nullopt);
    }
  }

  // Against the redis-benchmark bound.
  if (const auto* s1 = find(in, "S1")) {
    const bound_result& b = in.bound_single;
    if (b.ok) {
      const double needed = s1_min_share_of_bound * b.pairs_per_s();
      target_row(out,
                 fmt::format("S1 pairs/s ≥ {:.1f} × (1-connection bound ÷ 2) = {}", s1_min_share_of_bound,
                             format_rate(needed)),
                 fmt::format("{} ({} × bound)", format_rate(s1->pairs_per_s), ratio(s1->pairs_per_s, b.pairs_per_s())),
                 s1->pairs_per_s >= needed);
    } else {
      target_row(out, fmt::format("S1 pairs/s ≥ {:.1f} × (1-connection bound ÷ 2)", s1_min_share_of_bound),
                 fmt::format("{} (no bound)", format_rate(s1->pairs_per_s)), std::nullopt);
    }
  }
  if (const auto* s3 = find(in, "S3")) {
    const bound_result& b = in.bound_eight;
    const std::string share =
        b.ok ? fmt::format(" ({} × 8-conn bound ÷ 2)", ratio(s3->pairs_per_s, b.pairs_per_s())) : std::string();
    target_row(out, fmt::format("S3 pairs/s ≥ {}", format_rate(s3_min_pairs_per_s)),
               format_rate(s3->pairs_per_s) + share, s3->pairs_per_s >= s3_min_pairs_per_s);
  }

  // Contention: S2, and its FairLock twin.
  auto takeover = [&](const scenario_result& r, const char* which, std::int64_t value, double limit_ms) {
    const std::string target =
        fmt::format("{} takeover wait (hand-off gap) {} ≤ {:g} ms", r.spec.name, which, limit_ms);
    if (r.handoff_gap.count == 0) return target_row(out, target, "n/a (no owner changes)", false);
    target_row(out, target, format_ns(value), static_cast<double>(value) <= limit_ms * 1e6);
  };
  auto owner_changes = [&](const scenario_result& r) {
    const double changes = r.owner_change_share();
    target_row(
        out,
        fmt::format("{} owner changes ≥ {:g} % of successive acquisitions", r.spec.name, 100 * s2_min_owner_changes),
        fmt::format("{:.1f} %", changes * 100.0), changes >= s2_min_owner_changes);
  };
  if (const auto* s2 = find(in, "S2")) {
    owner_changes(*s2);
    takeover(*s2, "p50", s2->handoff_gap.p50, s2_max_handoff_p50_ms);
    takeover(*s2, "p99", s2->handoff_gap.p99, s2_max_handoff_p99_ms);
  }
  if (const auto* fair = find(in, "S2F")) {
    // FairLock hands the lock to the longest waiter: nearly every hand-off
    // changes owner and every thread gets its share.
    owner_changes(*fair);
    const double balance = fair->per_thread_max == 0
                               ? 0.0
                               : static_cast<double>(fair->per_thread_min) / static_cast<double>(fair->per_thread_max);
    target_row(out, "S2F per-thread acquisitions min ÷ max ≥ 0.9", fmt::format("{:.2f}", balance), balance >= 0.9);
    takeover(*fair, "p50", fair->handoff_gap.p50, s2_max_handoff_p50_ms);
  }

  if (const auto* spin = find(in, "S2S")) {
    // No targets: the SpinLock trades hand-off time and commands for having
    // no subscription. Figures only, next to the pub/sub Lock's.
    const auto* s2 = find(in, "S2");
    auto versus = [&](const char* what, double mine, double theirs, const char* unit) {
      auto text = [&](double v) { return v >= 0 ? fmt::format("{:.2f}{}", v, unit) : std::string("n/a"); };
      target_row(out, fmt::format("S2S {} (figure; S2's pub/sub Lock alongside)", what),
                 fmt::format("{} (S2: {})", text(mine), s2 ? text(theirs) : std::string("not run")), std::nullopt);
    };
    target_row(out, "S2S takeover wait (hand-off gap) p50 / p99 (figure; S2's alongside)",
               fmt::format("{} (S2: {})", p50_p99(spin->handoff_gap), s2 ? p50_p99(s2->handoff_gap) : "not run"),
               std::nullopt);
    versus("script calls per pair", spin->commands_per_pair({"evalsha", "eval"}),
           s2 ? s2->commands_per_pair({"evalsha", "eval"}) : -1, "");
    versus("all Redis commands per pair", spin->all_commands_per_pair(), s2 ? s2->all_commands_per_pair() : -1, "");
    versus("PUBLISH per pair", spin->commands_per_pair({"publish", "spublish"}),
           s2 ? s2->commands_per_pair({"publish", "spublish"}) : -1, "");
  }

  std::uint64_t violations = 0;
  std::string where;
  for (const auto& r : in.results) {
    violations += r.violations();
    where += (where.empty() ? "" : ", ") + r.spec.name;
  }
  fmt::print(out, "| mutual-exclusion violations = 0 ({}) | {} | {} |\n", where, violations,
             violations == 0 ? "✓ PASS" : "✗ FAIL");
  fmt::print(out, "\n");
}

}  // namespace

void print_report(std::FILE* out, const report_input& in) {
  fmt::print(out, "# warden-bench\n\n");
  fmt::print(out, "- {}: {}\n", in.cluster ? "cluster" : "server", in.server);
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
  if (in.loopback_rtt.count > 0) {
    fmt::print(out, "- loopback round trip (PING on one blocking hiredis connection, {} in a row): median {}, p99 {}\n",
               group_thousands(in.loopback_rtt.count), format_ns(in.loopback_rtt.p50), format_ns(in.loopback_rtt.p99));
  }
  fmt::print(out, "\n");
  print_bound_table(out, in);
  print_loop_table(out, in);
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
