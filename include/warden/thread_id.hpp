// warden — distributed locks on Redis.
// The integer warden writes for a thread in a lock's owner field.
#pragma once

#include <cstdint>

namespace warden {

// Identifies a thread within this process. Owner fields are
// "<client id>:<thread id>", as Redisson writes them.
using thread_id = std::uint64_t;

// The calling thread's id: assigned on first use, unique within the process for
// its lifetime (never reused), never 0.
thread_id current_thread_id() noexcept;

}  // namespace warden
