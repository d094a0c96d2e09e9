#include <warden/thread_id.hpp>

#include <atomic>

namespace warden {

namespace {
// Thread ids count up from 1 and owner ids from here: 2^63 threads would have
// to be started before the two ranges could meet.
constexpr thread_id first_owner_id = thread_id{1} << 63;
}  // namespace

thread_id current_thread_id() noexcept {
  // std::thread::id has no stable integer form and OS tids are reused; a
  // process-wide counter gives every thread its own number for good.
  static std::atomic<thread_id> next{1};
  thread_local const thread_id id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

thread_id new_owner_id() noexcept {
  static std::atomic<thread_id> next{first_owner_id};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace warden
