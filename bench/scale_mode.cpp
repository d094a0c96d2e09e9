// warden-bench: running the scale modes asked for and reporting them.
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "records.hpp"
#include "scale.hpp"
#include "server.hpp"
#include "target.hpp"

namespace warden_bench {

int run_scale_modes(const options& opts) {
  install_server_cleanup_handlers();
  scale_report_input report;
  report.cpus = std::thread::hardware_concurrency();
  report.load_at_start = load_average();
  bench_target target = open_target(opts);
  report.server = target.description;
  // Unique per run, as the scenarios' names are.
  const std::string key_prefix = fmt::format("warden-bench:{}.{:x}:", ::getpid(), now_ns() & 0xffffff);

  bool failed = false;
  scale_result scale;
  if (opts.scale) {
    scale_settings settings;
    settings.holds = *opts.scale;
    settings.periods = opts.periods;
    settings.in_flight = opts.in_flight;
    settings.batch = opts.batch;
    if (opts.lease_ms) settings.lease = std::chrono::milliseconds(*opts.lease_ms);
    settings.key_prefix = key_prefix;
    scale = run_scale(target.client, target.home, settings, report.notes);
    report.scale = &scale;
    failed = failed || scale.acquire_errors + scale.release_errors + scale.probe_errors + scale.holds_lost != 0;
    if (!scale.first_acquire_error.empty())
      report.notes.push_back("scale: first acquire error: " + scale.first_acquire_error);
    if (!scale.first_release_error.empty())
      report.notes.push_back("scale: first release error: " + scale.first_release_error);
    if (!scale.first_probe_error.empty())
      report.notes.push_back("scale: first probe error: " + scale.first_probe_error);
    if (!scale.first_lost.empty()) report.notes.push_back("scale: first hold lost: " + scale.first_lost);
    if (!scale.pttl_error.empty()) report.notes.push_back("scale: PTTL sampler: " + scale.pttl_error);
    if (scale.renewal_events_dropped != 0) {
      report.notes.push_back(
          fmt::format("scale: {} renewal events were not recorded (log full)", scale.renewal_events_dropped));
    }
  }
  waiters_result waiters;
  if (opts.waiters) {
    waiters_settings settings;
    settings.waiters = *opts.waiters;
    if (opts.lease_ms) settings.lease = std::chrono::milliseconds(*opts.lease_ms);
    settings.key_prefix = key_prefix;
    waiters = run_waiters(target.client, target.home, settings, report.notes);
    report.waiters = &waiters;
    failed = failed || waiters.acquired != waiters.waiters || waiters.second_acquired != waiters.waiters ||
             waiters.waiter_errors + waiters.holder_release_errors + waiters.unlock_errors + waiters.holds_lost +
                     waiters.second_errors !=
                 0;
    if (!waiters.first_waiter_error.empty())
      report.notes.push_back("waiters: first error: " + waiters.first_waiter_error);
  }
  report.load_at_end = load_average();

  report.notes.push_back(
      "Heap figures are this process's (glibc mallinfo2: uordblks, summed over every arena, plus hblkhd, the "
      "chunks mmapped for large requests); redis-server is another process. The bench's own storage (renewal "
      "log, probe samples, sampler) is allocated before the first reading; the Lock handles are counted as the "
      "client's (the handle vector's 16 B per lock included). Each \"held\" or \"parked\" figure is the smallest "
      "of a few readings, so a batch in flight at one reading does not count.");
  if (opts.scale) {
    report.notes.push_back(
        "Client CPU for renewals, as judged: the process's CPU (all threads: warden's I/O thread and the "
        "bench's observer callbacks) ÷ wall time over whole quiet periods after the probe windows, when "
        "nothing but the watchdog runs; nothing is subtracted. The figure with the probe running is the "
        "process's CPU over the windows less its CPU share in the baseline (the probe and the I/O work it "
        "causes) and the PTTL sampler thread's own: a difference of two noisy figures, shown as a cross-check.");
    report.notes.push_back(
        "The target ⌈H / batch⌉ uses Config::lock_watchdog_batch_size (default 100). A watchdog whose period drifts "
        "shows as windows with fewer (or no) renewal scripts.");
  }
  if (opts.waiters) {
    report.notes.push_back(
        "Waiters: the holder is a second Client in this process (lease as given, default 30 s, so no waiter wakes "
        "by its own timer during the run). Its heap is constant while the waiters park (its holds taken before the "
        "\"before\" reading), and it is destroyed before the leftover reading, which is compared with a reading "
        "taken before it existed.");
    report.notes.push_back(
        "Waiters, what is kept per name: the whole cycle (holder takes N locks, N waiters park, all released, "
        "everything dropped, the holder Client destroyed) runs twice, on two different sets of N names. glibc keeps "
        "freed chunks in bounded caches that mallinfo2 counts as in use (each thread's tcache, an arena's free "
        "lists and top), so the end of one cycle against the baseline includes them; they are as full after the "
        "second cycle as after the first, while anything warden kept per name would grow again with the second "
        "set. The target judges that growth, (heap at the end of cycle 2 − heap at the end of cycle 1) ÷ N; the "
        "first cycle's end against the baseline is shown as well.");
  }
  print_scale_report(stdout, report);
  return failed ? 1 : 0;
}

}  // namespace warden_bench
