// warden-bench: what the scale (--scale) and waiters (--waiters) modes
// measure, and the report that prints it with the issue-14 targets.
#pragma once

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "scale_common.hpp"
#include "wake_floor.hpp"

namespace warden_bench {

// Nearest-rank percentiles of durations in nanoseconds (count 0: none).
struct latency_figures {
  std::size_t count = 0;
  std::int64_t p50 = 0, p99 = 0, p999 = 0, max = 0;
};
latency_figures summarize_latency(std::vector<std::int64_t> samples);

// One renewal period of the hold phase, between two readings of the server.
struct period_figures {
  std::uint64_t scripts = 0;      // INFO commandstats script calls in the window
  std::uint64_t probe_pairs = 0;  // the probe's pairs that started in it
  double renewal_scripts = 0;     // scripts − probe pairs × the probe's scripts per pair (baseline)
  // From Observer::on_renewal:
  std::uint64_t batches_sent = 0, holds_sent = 0;
  std::uint64_t renewed = 0, gone = 0, failed = 0;  // confirmed: holds renewed / gone; failed batches
  latency_figures batch_latency;                    // sent → answer, confirmed batches
  std::int64_t sent_span_ns = 0;                    // first to last `sent` event in the window
  std::int64_t largest_gap_ns = 0;                  // largest gap between consecutive `sent` events in it
  std::size_t most_in_10ms = 0;                     // most `sent` events within any 10 ms
  latency_figures probe;                            // the probe's pairs started in the window
};

struct scale_result {
  std::size_t holds = 0;
  unsigned periods = 0;
  std::chrono::milliseconds lease{0}, period{0};
  std::size_t batch = 0;            // warden's renewal batch size the target is computed with
  std::size_t max_outstanding = 0;  // async acquires/releases in flight at most
  std::string owner_note;

  // (a) baseline
  double baseline_s = 0;
  latency_figures baseline;
  double baseline_cpu_share = NAN;  // process CPU ÷ wall while only the probe ran (fraction of a core)
  double scripts_per_probe_pair = 0;
  std::uint64_t baseline_errors = 0;

  // (b) acquire
  double acquire_s = 0;
  std::uint64_t acquire_errors = 0;
  std::uint64_t acquire_timed_out = 0;  // of acquire_errors: errc::timed_out
  std::string first_acquire_error;

  // (c) hold
  double calibration_s = 0;  // the period spent finding where to cut the windows
  double hold_s = 0;         // the N windows
  std::vector<period_figures> windows;
  latency_figures hold_probe;
  std::uint64_t probe_errors = 0;
  std::string first_probe_error;
  // Fractions of a core; NaN when unknown.
  double client_cpu_share = NAN;   // process CPU ÷ wall over the windows
  double sampler_cpu_share = 0;    // the PTTL sampler thread's own
  double renewal_cpu_share = NAN;  // client − baseline − sampler (noise can make it slightly negative)
  double server_cpu_share = NAN;   // redis-server, INFO cpu
  // (d) quiet: only the watchdog at work, no probe, no sampler. Process CPU ÷
  // wall over whole periods, nothing subtracted: the figure the target is
  // judged by (the subtraction above swings with the machine's state).
  unsigned quiet_periods = 0;
  double quiet_s = 0;
  double quiet_cpu_share = NAN;
  std::uint64_t quiet_renewals = 0;  // holds sent for renewal in the quiet window
  std::uint64_t holds_lost = 0;      // Observer::on_hold_lost, from the first acquire to the end
  std::string first_lost;
  std::int64_t min_pttl_ms = -3;
  std::uint64_t pttl_rounds = 0, pttl_keys = 0, pttl_missing = 0, pttl_no_expiry = 0;
  std::string pttl_error;
  std::uint64_t renewal_events_dropped = 0;

  // release
  double release_s = 0;
  double release_cpu_s = NAN;  // process CPU (all threads) over the release
  std::uint64_t release_errors = 0;
  std::uint64_t release_timed_out = 0;  // of release_errors: errc::timed_out (left to expire)
  std::string first_release_error;

  // (d) memory
  memory_sample before, held, held_end, after;
};

struct waiters_result {
  std::size_t waiters = 0;
  std::chrono::milliseconds lease{0};
  double holder_acquire_s = 0;
  std::uint64_t holder_errors = 0;
  std::string first_holder_error;

  double park_s = 0;                  // from the first lock_async to "parked"
  bool parked = false;                // the condition was met (else: timed out)
  std::int64_t channels = -1;         // INFO stats pubsub_channels when parked
  std::uint64_t scripts_to_park = 0;  // the waiters' script calls until then

  double release_issue_s = 0;  // issuing all N unlock_async of the holder
  std::uint64_t holder_release_errors = 0;
  latency_figures wake;                // release-all start → each waiter's completion
  latency_figures wake_after_release;  // its own lock's release answered (holder) → its completion
  double wake_server_cpu_s = 0;        // redis-server CPU from release-all start to the last completion
  double wake_client_cpu_s = 0;        // this process's CPU over it (both Clients' I/O threads, the bench's polling)
  std::map<std::string, std::uint64_t> wake_commands;  // the server's calls by command over the same window
  std::int64_t wake_expired_keys = 0;                  // keys the server expired over it (INFO stats)
  std::size_t latches_dropped = 0;                     // unlock latches removed around the floor's readings
  // From the last completion until the waiters' channels have no subscriber
  // left (INFO stats pubsub_channels back to its count before they parked):
  // how long, and the server's calls by command meanwhile.
  double channels_gone_s = -1;  // -1: not within 10 s
  std::map<std::string, std::uint64_t> tail_commands;
  wake_floors floors;           // the same N releases and acquires, pipelined on a plain connection, before and after
  latency_figures second_wake;  // the second cycle's wake (shown, not judged)
  std::size_t acquired = 0;
  std::uint64_t waiter_errors = 0;
  std::string first_waiter_error;
  double total_s = 0;  // release-all start → last completion
  bool all_done = false;

  double unlock_s = 0;
  std::uint64_t unlock_errors = 0;
  std::uint64_t holds_lost = 0;

  memory_sample baseline;  // measured Client warmed up, no holder yet
  memory_sample before;    // holder holding N, before the waiters' handles
  memory_sample parked_memory;
  memory_sample after;  // everything released and dropped, the holder Client destroyed
  // The same cycle again on N other names: its "before" and "parked"
  // readings, and its end. What warden keeps per name shows as growth from
  // `after` to `after_second`; a bounded allocator cache does not.
  memory_sample second_before, second_parked, after_second;
  std::size_t second_acquired = 0;
  std::uint64_t second_errors = 0;  // waiter, holder release and unlock errors, holds lost
  // Around destroying the holder Client (its handles already dropped): what
  // it still had then, which the leftover reading no longer includes.
  memory_sample holder_gone_before, holder_gone_after;
};

struct scale_report_input {
  std::string server;
  unsigned cpus = 0;
  std::string load_at_start, load_at_end;
  const scale_result* scale = nullptr;
  const waiters_result* waiters = nullptr;
  std::vector<std::string> notes;
};

// Targets of issues 14 and 29.
inline constexpr double max_added_latency_ms = 5.0;     // probe max during holding − baseline p50
inline constexpr double max_renewal_cpu_share = 0.05;   // < 5 % of a core
inline constexpr double max_bytes_per_hold = 1024;      // ≤ 1 KiB per held lock
inline constexpr double max_bytes_per_waiter = 1024;    // ≤ 1 KiB per parked waiter
inline constexpr double max_leftover_per_name = 16;     // ≈ 0: ≤ 16 B per name
inline constexpr double max_wake_p99_ms = 50.0;         // waiters wake p99 ≤ 50 ms
inline constexpr double max_wake_p99_over_floor = 1.2;  // issue 29: wake p99 ≤ 1.2 × the server's floor
// Renewal scripts per period may differ from ⌈H / batch⌉ by this share (or
// by one script, whichever is more): a window edge can split a batch's count.
inline constexpr double renewal_scripts_tolerance = 0.02;

void print_scale_report(std::FILE* out, const scale_report_input& in);

}  // namespace warden_bench
