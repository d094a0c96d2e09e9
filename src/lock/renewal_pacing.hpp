// How many renewal calls the watchdog may have unanswered on one server,
// judged by how late the next call's holds are. Others' commands share the
// connection and wait at the server behind every renewal already queued
// there (about 2 µs of server time per hold, and the call's own cost): the
// fewer in flight, the less another caller waits. But renewals must keep
// up: a cap of C holds per round trip R renews C / R holds a second, and a
// busy connection or a loaded machine stretches R. So the cap widens in
// steps as renewals fall behind, rather than jumping from a few calls to
// many at once (a jump queued a dozen milliseconds of renewals ahead of
// other callers). Pure: no clock, no I/O.
#pragma once

#include <chrono>
#include <cstddef>

namespace warden::detail {

struct RenewalPacing {
  // Each step caps both the calls and the holds in them: on time (due at
  // most a quarter of a period ago), behind (up to half a period late), late
  // (more: a lease of three periods then has less than half of it left, and
  // keeping the hold matters more than others' latency).
  struct Step {
    std::size_t calls;
    std::size_t holds;
  };
  // On time: one default batch (100 holds, ~0.25 ms of server work) ahead of
  // another caller's command, in up to two calls. Measured on 2 cores with
  // 100,000 holds: another caller's worst added latency fell from 9.7 ms at
  // 4 calls / 800 holds to 6.4 ms at 2 / 200 and 3.4 ms at 1 / 100.
  static constexpr Step on_time{2, 100};
  static constexpr Step behind{16, 3'200};
  static constexpr Step late{64, 12'800};

  // Renewal calls of `batch_size` holds that may be unanswered at once when
  // the call waiting to be sent has a hold `lateness` past its due time (<= 0:
  // not due yet) with renewals every `period`. At least one.
  static std::size_t calls_in_flight(std::chrono::nanoseconds lateness, std::chrono::nanoseconds period,
                                     std::size_t batch_size);
  // The most calls_in_flight() ever allows for `batch_size`.
  static std::size_t most_calls_in_flight(std::size_t batch_size);
};

}  // namespace warden::detail
