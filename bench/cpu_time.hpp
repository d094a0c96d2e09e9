// warden-bench: CPU time of this process and of the calling thread.
#pragma once

namespace warden_bench {

// User plus system CPU seconds of the whole process so far (every thread,
// warden's I/O thread included); -1 when the kernel will not say.
double process_cpu_s();

// User plus system CPU seconds of the calling thread so far; -1 when the
// kernel will not say.
double thread_cpu_s();

// Context switches of the whole process so far: a thread gave up its CPU to
// wait (voluntary) or was preempted (involuntary). On a VM each costs tens of
// microseconds of kernel time, so they explain most of a lightly loaded
// client's CPU per operation. Negative when the kernel will not say.
struct context_switches {
  long voluntary = -1;
  long involuntary = -1;
};
context_switches process_switches();
context_switches operator-(const context_switches& stop, const context_switches& start);

}  // namespace warden_bench
