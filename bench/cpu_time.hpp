// warden-bench: CPU time of this process and of the calling thread.
#pragma once

namespace warden_bench {

// User plus system CPU seconds of the whole process so far (every thread,
// warden's I/O thread included); -1 when the kernel will not say.
double process_cpu_s();

// User plus system CPU seconds of the calling thread so far; -1 when the
// kernel will not say.
double thread_cpu_s();

}  // namespace warden_bench
