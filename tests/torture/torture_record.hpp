// What a torture worker writes and the controller reads: one line per event,
// appended to the worker's own file with a single write() so that a worker
// killed with SIGKILL leaves only whole lines behind.
//
// Times are nanoseconds on CLOCK_MONOTONIC (std::chrono::steady_clock on
// Linux), one clock for every process on the machine, so intervals recorded
// by different workers can be compared directly.
//
//   S lock mode enter exit valid_until wrote write_valid pid thread token
//       A critical section. mode: x (exclusive), r (reader), w (writer).
//       valid_until: what valid_until() said right after `exit` was read
//       (0 for time_point::min(); INT64_MAX when no lock was taken, in the
//       negative control). wrote: the section wrote the counter;
//       write_valid: valid_until() still covered the end of that write.
//       token: the hold's fencing token (fenced), else 0.
//       semaphore, pes: one permit, mode x, no counter written.
//   I lock pid thread
//       About to write the counter (so that a write by a worker killed
//       before its S line is counted as possibly done).
//   C call start end wait_ms result pid thread lock mode
//       One blocking call. call: try_lock, try_lock_for, unlock.
//       result: ok, no (not acquired), or the error's errc value name.
//       lock, mode: which lock (index) and how (x, r, w), as for S. An
//       acquire's `end` is when the caller was given the lock; an unlock's
//       `start` is when its holder let go: the controller times hand-offs
//       from one to the other. semaphore, pes: the calls are try_acquire,
//       try_acquire_for and release; a pes acquire that took a permit adds
//       its id, a pes release adds valid (1: its answer came before the
//       permit's bound, read before the call, ran out) and kept or leased.
#pragma once

#include <cstdint>
#include <ctime>

namespace warden::torture {

inline std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// One slot per worker thread in a file both sides map shared: 1 while the
// thread is inside a critical section, so the controller can stop a holder.
constexpr int max_slots = 4096;
// Semaphore kinds: the slot is 1 while the thread holds a permit, 2 while
// its acquire and 3 while its release is in flight, and the slot this far
// above it holds the index of the semaphore concerned.
constexpr int permit_lock_slots = 2048;

}  // namespace warden::torture
