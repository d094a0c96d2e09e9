#include "composite/fan_out.hpp"

#include <atomic>

namespace warden::detail {

void schedule_on(LockHost& client, std::chrono::milliseconds delay, std::function<void()> fn,
                 std::function<void()> shut_down) {
  auto once = std::make_shared<std::atomic<bool>>(false);
  auto fail = std::make_shared<std::function<void()>>(std::move(shut_down));
  auto posted = client.post([&client, delay, once, fail, fn = std::move(fn)]() mutable {
    // Timers die with the loop; tracking makes shutdown fail the wait instead.
    auto ticket = client.track([once, fail] {
      if (!once->exchange(true)) (*fail)();
    });
    client.loop().after(delay, [&client, ticket, once, fn = std::move(fn)] {
      client.untrack(ticket);
      if (!once->exchange(true)) fn();
    });
  });
  if (!posted && !once->exchange(true)) (*fail)();
}

void release_unwanted(const std::shared_ptr<LockCore>& member, thread_id owner) {
  member->release(owner, [member](std::error_code error, const std::string& message) {
    if (error) member->client().log(log_level::warning, message + " (an unwanted hold; it expires with its lease)");
  });
}

}  // namespace warden::detail
