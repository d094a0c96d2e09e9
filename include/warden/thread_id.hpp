// warden — distributed locks on Redis.
// The integer warden writes for a thread in a lock's owner field.
#pragma once

#include <warden/export.hpp>

#include <cstdint>

namespace warden {

/// Identifies a thread within this process. Owner fields are
/// "<client id>:<thread id>", as Redisson writes them.
using thread_id = std::uint64_t;

/// The calling thread's id: assigned on first use, unique within the process for
/// its lifetime (never reused), never 0, always below 2^63.
WARDEN_API thread_id current_thread_id() noexcept;

/// A fresh owner id for work that is not tied to one thread (a task hopping
/// between threads, a session): pass it as the `owner` of the *_async calls.
/// Unique within the process (never reused), drawn from [2^63, 2^64), a range
/// current_thread_id() never returns, so it cannot collide with any thread's
/// holds. Thread-safe.
WARDEN_API thread_id new_owner_id() noexcept;

}  // namespace warden
