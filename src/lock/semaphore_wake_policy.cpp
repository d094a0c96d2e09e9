#include "lock/semaphore_wake_policy.hpp"

#include "lock/wake_policy.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace warden::detail {

WakeRules::actions SemaphoreWakePolicy::on(const event& e) const {
  if (const auto* published = std::get_if<message>(&e)) return on_message(*published);
  return lock_wake_policy().on(e);
}

WakeRules::actions SemaphoreWakePolicy::on_message(const message& e) const {
  long long available = 0;
  auto end = e.payload.data() + e.payload.size();
  auto [at, problem] = std::from_chars(e.payload.data(), end, available);
  // Not a count (someone else's publisher): everyone re-tries.
  if (problem != std::errc() || at != end) return {owe_unparked{}, wake_parked{}};
  if (available <= 0) return {};
  auto free = static_cast<std::uint64_t>(available);
  auto parked = std::min<std::uint32_t>(e.parked, e.waiters);
  auto woken = static_cast<std::uint32_t>(std::min<std::uint64_t>(free, parked));
  auto awake = e.waiters - parked;
  auto owed = static_cast<std::uint32_t>(std::min<std::uint64_t>(free - woken, awake));
  actions todo;
  auto permits = std::min<std::uint32_t>(std::max(e.permits, owed), e.waiters);
  if (permits != e.permits) todo.push_back(set_permits{permits});
  if (woken > 0) todo.push_back(wake_some{woken});
  return todo;
}

const WakeRules& semaphore_wake_policy() {
  static const SemaphoreWakePolicy policy;
  return policy;
}

}  // namespace warden::detail
