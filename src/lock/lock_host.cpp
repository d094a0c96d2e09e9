#include "lock/lock_host.hpp"

#include <fmt/format.h>

namespace warden::detail {

void ShutdownHooks::track(ShutdownHook& hook) {
  if (hook.tracked()) return;
  hook.next_ = &head_;
  hook.prev_ = head_.prev_;
  head_.prev_->next_ = &hook;
  head_.prev_ = &hook;
}

void ShutdownHooks::untrack(ShutdownHook& hook) {
  if (!hook.tracked()) return;
  hook.prev_->next_ = hook.next_;
  hook.next_->prev_ = hook.prev_;
  hook.prev_ = hook.next_ = nullptr;
}

void ShutdownHooks::fail_all() {
  while (!empty()) {
    ShutdownHook* hook = head_.next_;
    untrack(*hook);
    hook->on_shutdown();
  }
}

std::string lock_message(std::string_view lock, std::string_view server, std::string_view what) {
  return fmt::format("warden: lock '{}' on {}: {}", lock, server, what);
}

}  // namespace warden::detail
