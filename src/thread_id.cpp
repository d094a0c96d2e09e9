#include <warden/thread_id.hpp>

#include <atomic>

namespace warden {

thread_id current_thread_id() noexcept {
  // std::thread::id has no stable integer form and OS tids are reused; a
  // process-wide counter gives every thread its own number for good.
  static std::atomic<thread_id> next{1};
  thread_local const thread_id id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

}  // namespace warden
