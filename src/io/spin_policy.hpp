// Who may busy-wait for a reply, so that one thread saves the sleep and
// wake-up that cost more than a loopback round trip, without the spinning
// taking the cores the others need.
//
// - A caller that is the only one waiting in the process spins briefly before
//   sleeping; the I/O thread sleeps in epoll as usual.
// - With several callers waiting, they all sleep and the I/O thread polls
//   without sleeping for a short while after each wake-up instead: it is the
//   one thread whose latency every caller pays.
#pragma once

#include <atomic>
#include <chrono>

namespace warden::detail {

// Callers currently blocked in a synchronous warden call, process-wide.
inline std::atomic<int>& waiting_callers() {
  static std::atomic<int> count{0};
  return count;
}

constexpr std::chrono::microseconds caller_spin{200};
constexpr std::chrono::microseconds io_spin{100};

}  // namespace warden::detail
